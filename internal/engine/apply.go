package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Verdict is what `apply` does with a plan, given the run already saved
// under its name.
type Verdict string

const (
	StartRun     Verdict = "start"         // no run yet: start one
	ResumeRun    Verdict = "resume"        // an unfinished run of the same plan
	AlreadyDone  Verdict = "already-done"  // succeeded with the same plan: nothing to do
	StartAttempt Verdict = "new-attempt"   // rolled back, --retry: start over with fresh backups
	ReportFailed Verdict = "report-failed" // rolled back, no --retry: report the failure
	Refuse       Verdict = "refuse"        // the plan changed, or another run is unfinished
)

// NextAction is what an operator can do about a refusal or a reported
// failure. It is data: each driver names it in its own terms (the CLI as a
// command line), so no driver's syntax lands in the engine.
type NextAction string

const (
	// FinishRun: another run is unfinished; resume, retry, roll back or
	// abort it (Decision.Run).
	FinishRun NextAction = "finish-run"
	// RollBackRun: the unfinished run's plan changed; apply the original
	// plan to resume it, or roll it back.
	RollBackRun NextAction = "rollback-run"
	// RetryRun: the run rolled back; a new attempt starts it over.
	RetryRun NextAction = "retry-run"
)

// Decision is a Verdict and why, and what the operator can do next.
type Decision struct {
	Verdict Verdict
	Reason  string
	// Next is the operator's way on ("" when none is needed); Run is the
	// run it concerns.
	Next NextAction
	Run  string
}

// DecideApply decides what `apply` does. existing is the run saved under
// the plan's name (nil: none); others are the other runs on the cluster.
func DecideApply(existing *v1alpha1.UpgradeRun, others []v1alpha1.UpgradeRun, digest string, sources map[string]string, retry bool) Decision {
	for _, o := range others {
		if !o.Status.Phase.Finished() {
			return Decision{Verdict: Refuse, Reason: fmt.Sprintf("run %s is unfinished (%s): finish it first", o.Name, o.Status.Phase), Next: FinishRun, Run: o.Name}
		}
	}
	if existing == nil {
		return Decision{Verdict: StartRun, Reason: "no run of this plan yet"}
	}
	changed := Changes(existing, digest, sources)
	switch existing.Status.Phase {
	case v1alpha1.RunSucceeded:
		if changed != "" {
			return Decision{Verdict: Refuse, Reason: fmt.Sprintf("run %s already reached version %s with other content (%s): a new plan needs a new metadata.name", existing.Name, existing.Spec.Plan.Version, changed)}
		}
		return Decision{Verdict: AlreadyDone, Reason: fmt.Sprintf("run %s already reached version %s; nothing to do", existing.Name, existing.Spec.Plan.Version)}
	case v1alpha1.RunRolledBack:
		if changed != "" {
			return Decision{Verdict: Refuse, Reason: fmt.Sprintf("run %s was rolled back and the plan changed since (%s): a new plan needs a new metadata.name", existing.Name, changed)}
		}
		if retry {
			return Decision{Verdict: StartAttempt, Reason: fmt.Sprintf("run %s was rolled back; attempt %d starts from the first stage", existing.Name, existing.Status.Attempt+1)}
		}
		return Decision{Verdict: ReportFailed, Reason: fmt.Sprintf("run %s failed and was rolled back: %s", existing.Name, existing.Status.Message), Next: RetryRun, Run: existing.Name}
	}
	if changed != "" {
		return Decision{Verdict: Refuse, Reason: fmt.Sprintf("run %s is unfinished (%s) and the plan changed since it started (%s): apply the original plan to resume, or roll it back", existing.Name, existing.Status.Phase, changed), Next: RollBackRun, Run: existing.Name}
	}
	return Decision{Verdict: ResumeRun, Reason: fmt.Sprintf("resuming run %s (%s)", existing.Name, existing.Status.Phase)}
}

// Changes says what differs between a saved run and a plan's digests, or
// "" when nothing does.
func Changes(r *v1alpha1.UpgradeRun, digest string, sources map[string]string) string {
	if r.Spec.PlanDigest == digest {
		return ""
	}
	var diffs []string
	for path, d := range sources {
		old, ok := r.Spec.SourceDigests[path]
		switch {
		case !ok:
			diffs = append(diffs, path+" is new")
		case old != d:
			diffs = append(diffs, path+" content changed")
		}
	}
	for path := range r.Spec.SourceDigests {
		if _, ok := sources[path]; !ok {
			diffs = append(diffs, path+" was removed")
		}
	}
	sort.Strings(diffs)
	if len(diffs) == 0 {
		return "the plan's spec changed"
	}
	return strings.Join(diffs, "; ")
}
