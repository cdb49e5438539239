package report

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Upgrade is what a multi-hop upgrade did: its hops in order, each the
// report of the run that made it, with from and to for the whole.
type Upgrade struct {
	From string `json:"from"`
	// To is the version the upgrade was asked for; built from the runs
	// alone (Planned false), the last hop's.
	To string `json:"to"`
	// Planned: To and Path are the request and the path solved for it,
	// as the driver that ran the upgrade knew them. False when read off
	// the runs' records, which keep neither: Path is then the hops'.
	Planned bool `json:"planned"`
	// Path are the versions the hops go to, in order.
	Path []string `json:"path"`
	// Reached is the version the hops that succeeded in a row from the
	// first reached: To when all did, From when the first did not.
	Reached string `json:"reached"`
	// Phase is Succeeded when every hop of the path did and it reached
	// To, else the phase of the first hop that did not (Pending for one
	// not run): the hop the upgrade is at, which At numbers (from 1; 0
	// when the target was reached).
	Phase   v1alpha1.RunPhase `json:"phase"`
	At      int               `json:"at,omitempty"`
	Summary string            `json:"summary"`
	// Timing runs from the first hop's start to the last hop's end, the
	// time between hops included.
	Timing
	// Hops are the hops that ran.
	Hops []Report `json:"hops"`
	// NotRun are the hops of Path after them, which no run made.
	NotRun []HopNotRun `json:"notRun,omitempty"`
	// Warnings are about the hops as a sequence (a hop that did not start
	// where the one before it ended); each hop has its own too.
	Warnings []string `json:"warnings,omitempty"`
	// Next is what to do about the hop the upgrade stopped at, or about
	// the warnings of a finished upgrade.
	Next []Action `json:"next,omitempty"`
}

// BuildUpgrade is the report of the runs of one upgrade, given in the
// order their hops ran, from their records alone: the last hop's version
// stands for the target. Each run is read as Build reads it.
func BuildUpgrade(runs ...*v1alpha1.UpgradeRun) Upgrade {
	hops := buildHops(runs)
	return buildUpgrade(requestOfHops(hops), false, hops)
}

// BuildUpgradeFor is the report of an upgrade as asked for: its target,
// and the hops of its path the runs (given in the order their hops ran)
// did not make listed as not run.
func BuildUpgradeFor(req Request, runs ...*v1alpha1.UpgradeRun) Upgrade {
	return buildUpgrade(req.redacted(), true, buildHops(runs))
}

func buildHops(runs []*v1alpha1.UpgradeRun) []Report {
	hops := []Report{}
	for _, r := range runs {
		hops = append(hops, Build(r))
	}
	return hops
}

func buildUpgrade(req Request, planned bool, hops []Report) Upgrade {
	u := Upgrade{From: req.From, To: req.Target, Planned: planned, Path: req.Path, Phase: v1alpha1.RunPending, Hops: hops}
	if u.Path == nil {
		u.Path = []string{}
	}
	if len(hops) > 0 {
		u.From = hops[0].From
	}
	if u.From == "" {
		u.From = UnknownVersion
	}
	if u.To == "" {
		u.To = UnknownVersion
	}
	u.Reached = u.From
	if len(hops) == 0 && len(u.Path) == 0 {
		u.Summary = "no hop"
		return u
	}
	u.Phase = v1alpha1.RunSucceeded
	for i, h := range hops {
		if i > 0 {
			prev := hops[i-1]
			if h.From != prev.To && h.From != UnknownVersion {
				u.Warnings = append(u.Warnings, fmt.Sprintf("hop %d (run %s) started from version %s, not from %s where hop %d (run %s) goes", i+1, h.Name, h.From, prev.To, i, prev.Name))
			}
		}
		if i < len(u.Path) && !sameVersion(h.To, u.Path[i]) {
			u.Warnings = append(u.Warnings, fmt.Sprintf("hop %d (run %s) goes to version %s, not to %s as the path does", i+1, h.Name, h.To, u.Path[i]))
		}
		if u.At == 0 && h.Phase != v1alpha1.RunSucceeded {
			u.At, u.Phase = i+1, h.Phase
			u.Next = h.Next
		}
		if u.At == 0 {
			u.Reached = h.To
		}
	}
	u.NotRun = notRun(req.From, u.Path, len(hops))
	switch {
	case u.At > 0:
	case len(u.NotRun) > 0:
		u.At, u.Phase = u.NotRun[0].Hop, v1alpha1.RunPending
	case !u.pathReachesTarget():
		u.At, u.Phase = len(hops)+1, v1alpha1.RunPending
	}
	u.Summary = upgradeSummary(u)
	if u.At == 0 {
		if n := warnings(hops); n > 0 {
			u.Next = []Action{{Kind: ReviewWarnings, Run: hops[len(hops)-1].Name, Why: fmt.Sprintf("the upgrade reached version %s with %d warning(s) (in the hops below): look into them before the next upgrade", u.To, n)}}
		}
	}
	if len(hops) > 0 {
		first, last := hops[0], hops[len(hops)-1]
		u.Started = first.Started
		if done := everyHopAtRest(hops); done && last.Finished != nil && u.Started != nil {
			u.Finished = last.Finished
			u.Duration = &metav1.Duration{Duration: u.Finished.Sub(*u.Started)}
		}
	}
	return u
}

// pathReachesTarget: the path ends at To. It does not when the driver
// stopped before solving it (at a hop it resumed): the hops past are not
// known yet.
func (u Upgrade) pathReachesTarget() bool {
	n := len(u.Path)
	return n > 0 && sameVersion(u.Path[n-1], u.To)
}

// upgradeSummary says where the upgrade stands, in a sentence: the
// target reached, or the hop it is at out of the path's.
func upgradeSummary(u Upgrade) string {
	of := fmt.Sprint(max(len(u.Path), len(u.Hops)))
	if !u.pathReachesTarget() {
		of = fmt.Sprintf("at least %d", max(len(u.Path), len(u.Hops))+1)
	}
	switch {
	case u.At == 0:
		return fmt.Sprintf("reached version %s in %d hop(s)", u.To, len(u.Hops))
	case u.At > len(u.Hops) && len(u.NotRun) > 0:
		h := u.NotRun[0]
		return fmt.Sprintf("at hop %d of %s (%s → %s): not run; the cluster is at version %s", u.At, of, h.From, h.To, u.Reached)
	case u.At > len(u.Hops):
		return fmt.Sprintf("at hop %d of %s: the path from version %s on to %s is not solved yet; the cluster is at version %s", u.At, of, u.Reached, u.To, u.Reached)
	}
	h := u.Hops[u.At-1]
	// A hop that moved and was not rolled back (and verified) leaves
	// the cluster between its two versions.
	where := fmt.Sprintf("the cluster is between versions %s and %s", h.From, h.To)
	if h.Phase == v1alpha1.RunRolledBack || h.Phase == v1alpha1.RunPending {
		where = "the cluster is at version " + u.Reached
	}
	return fmt.Sprintf("at hop %d of %s (run %s, %s → %s): %s; %s", u.At, of, h.Name, h.From, h.To, h.Summary, where)
}

// warnings counts the warning gates that did not pass, across hops.
func warnings(hops []Report) int {
	n := 0
	for _, h := range hops {
		for _, g := range h.Gates.Warning {
			if g.Result == Failed {
				n++
			}
		}
	}
	return n
}

// everyHopAtRest: no hop moves any more without an operator.
func everyHopAtRest(hops []Report) bool {
	for _, h := range hops {
		if h.Finished == nil {
			return false
		}
	}
	return true
}
