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
	To   string `json:"to"`
	// Reached is the version the hops that succeeded in a row from the
	// first reached: To when all did, From when the first did not.
	Reached string `json:"reached"`
	// Phase is Succeeded when every hop did, else the phase of the first
	// hop that did not: the hop the upgrade is at, which At numbers
	// (from 1; 0 when every hop succeeded).
	Phase   v1alpha1.RunPhase `json:"phase"`
	At      int               `json:"at,omitempty"`
	Summary string            `json:"summary"`
	// Timing runs from the first hop's start to the last hop's end, the
	// time between hops included.
	Timing
	Hops []Report `json:"hops"`
	// Warnings are about the hops as a sequence (a hop that did not start
	// where the one before it ended); each hop has its own too.
	Warnings []string `json:"warnings,omitempty"`
	// Next is what to do about the hop the upgrade stopped at, or about
	// the warnings of a finished upgrade.
	Next []Action `json:"next,omitempty"`
}

// BuildUpgrade is the report of the runs of one upgrade, given in the
// order their hops ran. Each run is read as Build reads it.
func BuildUpgrade(runs ...*v1alpha1.UpgradeRun) Upgrade {
	u := Upgrade{From: UnknownVersion, To: UnknownVersion, Reached: UnknownVersion, Phase: v1alpha1.RunPending, Hops: []Report{}}
	for _, r := range runs {
		u.Hops = append(u.Hops, Build(r))
	}
	if len(u.Hops) == 0 {
		u.Summary = "no hop"
		return u
	}
	first, last := u.Hops[0], u.Hops[len(u.Hops)-1]
	u.From, u.To, u.Reached = first.From, last.To, first.From
	u.Phase = v1alpha1.RunSucceeded
	for i, h := range u.Hops {
		if i > 0 {
			prev := u.Hops[i-1]
			if h.From != prev.To && h.From != UnknownVersion {
				u.Warnings = append(u.Warnings, fmt.Sprintf("hop %d (run %s) started from version %s, not from %s where hop %d (run %s) goes", i+1, h.Name, h.From, prev.To, i, prev.Name))
			}
		}
		if u.At == 0 && h.Phase != v1alpha1.RunSucceeded {
			u.At, u.Phase = i+1, h.Phase
			u.Next = h.Next
		}
		if u.At == 0 {
			u.Reached = h.To
		}
	}
	if u.At == 0 {
		u.Summary = fmt.Sprintf("reached version %s in %d hop(s)", u.To, len(u.Hops))
		if n := warnings(u.Hops); n > 0 {
			u.Next = []Action{{Kind: ReviewWarnings, Run: last.Name, Why: fmt.Sprintf("the upgrade reached version %s with %d warning(s) (in the hops below): look into them before the next upgrade", u.To, n)}}
		}
	} else {
		h := u.Hops[u.At-1]
		// A hop that moved and was not rolled back (and verified) leaves
		// the cluster between its two versions.
		where := fmt.Sprintf("the cluster is between versions %s and %s", h.From, h.To)
		if h.Phase == v1alpha1.RunRolledBack || h.Phase == v1alpha1.RunPending {
			where = "the cluster is at version " + u.Reached
		}
		u.Summary = fmt.Sprintf("at hop %d of %d (run %s, %s → %s): %s; %s", u.At, len(u.Hops), h.Name, h.From, h.To, h.Summary, where)
	}
	u.Started = first.Started
	if done := everyHopAtRest(u.Hops); done && last.Finished != nil && u.Started != nil {
		u.Finished = last.Finished
		u.Duration = &metav1.Duration{Duration: u.Finished.Sub(*u.Started)}
	}
	return u
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
