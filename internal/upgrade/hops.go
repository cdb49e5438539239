package upgrade

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runner"
)

// Hops runs an upgrade's hops one after the other.
type Hops struct {
	Session *runner.Session
	// Clients read the version sources, peers and matrix.
	Clients *clients.Set
	Catalog *catalog.Catalog
	Request Request
	// Retry starts a rolled-back first hop again (apply --retry).
	Retry bool
	// Resolve reads a hop plan's sources: the CLI with the kubeconfig's
	// credentials, the controller with the plan's ServiceAccount's.
	Resolve func(ctx context.Context, name string, l *plan.Loaded) (*resolve.Plan, error)
	// Notice tells what happens between runs (the runs' transitions go
	// to the session's Observe); nil: nothing.
	Notice func(string)
	// Solved is called with the solution before the first hop runs.
	Solved func(*Solution)
	// HopDone is called after each hop this Run drove, whatever its end.
	HopDone func(Hop)
}

// Hop is a hop Run drove, and where it left it.
type Hop struct {
	From string `json:"from,omitempty"`
	To   string `json:"to"`
	// Resumed: an earlier run of the upgrade started it.
	Resumed bool                 `json:"resumed,omitempty"`
	Run     *v1alpha1.UpgradeRun `json:"run"`
}

// Result is where Run left the upgrade.
type Result struct {
	// Hops are the hops driven, in order.
	Hops []Hop
	// Solution is nil when Run stopped before solving (at a resumed hop).
	Solution *Solution
	// Stopped is the outcome of the hop that did not succeed; nil when
	// the target was reached.
	Stopped *runner.Result
}

// PreflightError: a hop's plan does not fit the cluster as the hops
// before it left it; nothing of that hop was written.
type PreflightError struct {
	Name string
	Errs field.ErrorList
}

func (e *PreflightError) Error() string {
	return fmt.Sprintf("%s: preflight found %d problem(s)", e.Name, len(e.Errs))
}

// RefusedError: the runner refused a hop (another run unfinished, a
// changed plan); Result carries its decision.
type RefusedError struct {
	Run    string
	Result *runner.Result
	Err    error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// VerifyError: a hop's run succeeded but the version sources do not say
// its version; the next hop would start from a wrong one.
type VerifyError struct {
	Run      string
	Version  *semver.Version
	Findings []catalog.Finding
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("run %s reached %s, but the catalog's version sources do not say so (%s): check the release's plan and the catalog's spec.detect; the upgrade stops here",
		e.Run, e.Version, DescribeFindings(e.Findings))
}

func (h *Hops) notice(msg string) {
	if h.Notice != nil {
		h.Notice(msg)
	}
}

// Run drives the upgrade on until the target is reached or a hop stops.
// An error is a refusal, a preflight problem, a verification failure or
// one of Solve's; the hops driven before it are in the result.
func (h *Hops) Run(ctx context.Context) (*Result, error) {
	res := &Result{}
	others, stop, err := h.resumeUnfinished(ctx, res)
	if stop || err != nil {
		return res, err
	}
	s, err := Solve(ctx, h.Catalog, h.Clients, h.Request)
	if err != nil {
		return res, err
	}
	res.Solution = s
	if h.Solved != nil {
		h.Solved(s)
	}
	for i := range s.Path {
		h.notice(fmt.Sprintf("hop %d/%d: %s", i+1, len(s.Path), s.HopName(i)))
		out, err := h.hop(ctx, s, i, res, others)
		if err != nil {
			return res, err
		}
		if !succeeded(out) {
			res.Stopped = out
			return res, nil
		}
		if err := h.verify(ctx, s.Path[i].Version, out.Run.Name); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Resumable tells whether an upgrade driven for owner resumes run r: an
// unfinished run it started itself (for a resource, the same UID: a
// PlatformUpgrade re-created under its name resumes nothing of the old
// one's). Another's unfinished run makes the next hop's apply refuse,
// naming it; one an operator aborted is resumed only on a retry.
func Resumable(r *v1alpha1.UpgradeRun, owner *v1alpha1.RunOwner) bool {
	if r.Status.Phase.Finished() || !engine.OwnedBy(r, owner) {
		return false
	}
	return owner == nil || r.Spec.Owner.UID == owner.UID
}

// AbortedError: the upgrade's unfinished hop was aborted by an operator;
// only a retry resumes it (an abort is not undone by an edit, a restart or
// another upgrade).
type AbortedError struct {
	Run     string
	Version *semver.Version
}

func (e *AbortedError) Error() string {
	return fmt.Sprintf("the hop to %s was aborted by an operator (run %s): retry the upgrade to resume it (a PlatformUpgrade: annotate upshift.dev/retry; the CLI: upshift upgrade --retry; the wizard: retry the upgrade, or POST /api/runs/%s/retry), or roll the run back (upshift rollback %s)", e.Version, e.Run, e.Run, e.Run)
}

func succeeded(out *runner.Result) bool {
	return out.Run != nil && out.Run.Status.Phase == v1alpha1.RunSucceeded && out.Stopped == nil
}

// resumeUnfinished drives on a hop left unfinished by an earlier upgrade
// of one of the catalog's releases, from the plan saved with its run: the
// catalog may render it differently now, and its version sources may be
// half-way. stop says the upgrade cannot go on past it.
//
// Only a run this driver started is resumed (Resumable): never another
// tenant's, and never one an operator aborted. Any other unfinished run
// makes the next hop's apply refuse, naming it; others are those, by name.
func (h *Hops) resumeUnfinished(ctx context.Context, res *Result) (others map[string]*v1alpha1.UpgradeRun, stop bool, err error) {
	runs, err := h.Session.Store().List(ctx)
	if err != nil {
		return nil, false, err
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].CreationTimestamp.Before(&runs[j].CreationTimestamp) })
	others = map[string]*v1alpha1.UpgradeRun{}
	for i := range runs {
		r := runs[i]
		if !Resumable(&r, h.Session.Owner()) {
			if !r.Status.Phase.Finished() {
				others[r.Name] = &runs[i]
			}
			continue
		}
		v, err := semver.NewVersion(r.Spec.Plan.Version)
		if err != nil {
			continue
		}
		if _, ok := h.Catalog.Release(v); !ok {
			continue // not this platform's: the next hop's apply refuses, naming it
		}
		// Resume decides on the run as read under its lease: an abort
		// landing after the list above still holds without a retry.
		if r.Status.Phase != v1alpha1.RunAborted || h.Retry {
			h.notice(fmt.Sprintf("run %s to %s is unfinished (%s): resuming it first", r.Name, v, r.Status.Phase))
		}
		out, err := h.Session.Resume(ctx, r.Name, h.Retry)
		if errors.Is(err, runner.ErrAbortedRun) {
			return others, true, &AbortedError{Run: r.Name, Version: v}
		}
		if err != nil {
			return others, true, h.refused(out, err, r.Name)
		}
		hop := Hop{To: v.String(), Resumed: true, Run: out.Run}
		res.Hops = append(res.Hops, hop)
		if h.HopDone != nil {
			h.HopDone(hop)
		}
		if !succeeded(out) {
			res.Stopped = out
			return others, true, nil
		}
		return others, false, h.verify(ctx, v, r.Name)
	}
	return others, false, nil
}

// hop runs hop i: its plan from the catalog, checked against the cluster
// as the hops before it left it. others are the unfinished runs not this
// driver's (resumeUnfinished).
func (h *Hops) hop(ctx context.Context, s *Solution, i int, res *Result, others map[string]*v1alpha1.UpgradeRun) (*runner.Result, error) {
	l, err := s.Plan(ctx, i)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("release %s's plan %s", s.Path[i].Version, l.Plan.Name)
	p, err := h.Resolve(ctx, name, l)
	if err != nil {
		return nil, err
	}
	// The runner's apply resumes a run of the hop's name that an owner of
	// the same kind, namespace and name started (a plan re-created keeps
	// its run), aborted or not: an earlier upgrade's under the same name
	// (a re-created PlatformUpgrade, a wizard started over) is refused
	// here, not resumed.
	if r := others[p.RunName()]; r != nil {
		reason := fmt.Sprintf("run %s is unfinished (%s) and was started by %s, not by this upgrade (%s): only the upgrade that started it resumes it; roll it back or retry it first",
			r.Name, r.Status.Phase, ownerText(r.Spec.Owner), ownerText(h.Session.Owner()))
		out := &runner.Result{Decision: engine.Decision{Verdict: engine.Refuse, Reason: reason, Run: r.Name}}
		return nil, h.refused(out, fmt.Errorf("%w: %s", runner.ErrRefused, reason), r.Name)
	}
	p.From = VersionString(s.HopFrom(i)) // the report's "from", as the catalog found it
	h.Session.ReadAhead(ctx, p)
	if errs := h.Session.Preflight(ctx, p); len(errs) > 0 {
		return nil, &PreflightError{Name: name, Errs: errs}
	}
	if scanned, err := ScanRemovedAPIs(ctx, h.Clients, s, i, name); err != nil {
		return nil, err
	} else if scanned != "" {
		h.notice(scanned)
	}
	out, err := h.Session.Apply(ctx, p, h.Retry && i == 0)
	if err != nil {
		return nil, h.refused(out, err, p.Plan.Name)
	}
	if out.Decision.Verdict == engine.AlreadyDone {
		h.notice(out.Decision.Reason)
	}
	hop := Hop{From: VersionString(s.HopFrom(i)), To: s.Path[i].Version.String(), Run: out.Run}
	res.Hops = append(res.Hops, hop)
	if h.HopDone != nil {
		h.HopDone(hop)
	}
	return out, nil
}

// ownerText names a run's owner, with its UID: two upgrades of the same
// name are told apart by it.
func ownerText(o *v1alpha1.RunOwner) string {
	if o == nil || o.UID == "" {
		return o.String()
	}
	return fmt.Sprintf("%s (uid %s)", o, o.UID)
}

func (h *Hops) refused(out *runner.Result, err error, run string) error {
	return &RefusedError{Run: run, Result: out, Err: err}
}

// verify checks that the catalog's version sources say the version a hop
// just reached: a plan that succeeds without moving them would make the
// next hop start from the wrong version. Not when the request gave the
// version (the sources cannot see it) or the catalog names no source.
func (h *Hops) verify(ctx context.Context, v *semver.Version, run string) error {
	if h.Request.From != nil || len(h.Catalog.Spec.Detect) == 0 {
		return nil
	}
	findings, got, err := Detect(ctx, h.Catalog, h.Clients)
	if err == nil && got.Equal(v) {
		return nil
	}
	return &VerifyError{Run: run, Version: v, Findings: findings}
}
