package apps

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// What a person sees of a rollout and may do with it: one owner for the
// CLI (upshift app) and the API behind the web UI, so the two cannot
// disagree on which step is current or which action applies.

// StepState is where a canary step stands.
type StepState string

const (
	StepDone    StepState = "done"
	StepCurrent StepState = "current"
	StepPending StepState = "pending"
)

// Step is a canary step as shown: its weight and pause, where it stands,
// and for the current one what it waits for.
type Step struct {
	Weight int32 `json:"weight"`
	// Pause in seconds once the step's pods are ready (0: move on at once,
	// unless UntilPromoted holds it until promoted).
	Pause         int32     `json:"pause,omitempty"`
	UntilPromoted bool      `json:"untilPromoted,omitempty"`
	State         StepState `json:"state"`
	// Detail says what the current step waits for ("pods starting",
	// "holding, 4m left", "moving on").
	Detail string `json:"detail,omitempty"`
}

// Steps are the rollout's canary steps (none when it has no canary).
func Steps(a *v1alpha1.AppRollout, now time.Time) []Step {
	c := a.Spec.UpgradeStrategy.Canary
	if c == nil || !c.Enabled || a.Spec.UpgradeStrategy.Type == v1alpha1.StrategyRolling {
		return nil
	}
	st := a.Status
	deploying := st.Phase == v1alpha1.AppDeploying
	steps := make([]Step, len(c.Steps))
	for i, s := range c.Steps {
		steps[i] = Step{Weight: s.Weight, Pause: s.Pause, UntilPromoted: s.UntilPromoted, State: StepPending}
		switch {
		case deploying && int32(i) == st.CanaryStep:
			steps[i].State, steps[i].Detail = StepCurrent, stepDetail(s, st, now)
		case deploying && int32(i) < st.CanaryStep, st.Phase == v1alpha1.AppHealthChecking, st.Phase == v1alpha1.AppHealthy && st.Attempt > 0:
			steps[i].State = StepDone
		}
	}
	return steps
}

// stepDetail says what the step the canary is at waits for.
func stepDetail(s v1alpha1.AppCanaryStep, st v1alpha1.AppRolloutStatus, now time.Time) string {
	if st.PauseStartedAt == nil {
		return "pods starting"
	}
	if s.UntilPromoted {
		return "holding until promoted"
	}
	end := st.PauseStartedAt.Add(time.Duration(s.Pause) * time.Second)
	if st.PausedAt != nil {
		now = st.PausedAt.Time // the pause's clock stands still while paused
	}
	if left := end.Sub(now); left > 0 {
		return "holding, " + duration.HumanDuration(left) + " left"
	}
	return "moving on"
}

// Display is the phase with Paused, or the Stalled reason, when a person
// holds the rollout: "Deploying (paused)", "Failed (RollbackFailed)".
func Display(a *v1alpha1.AppRollout) string {
	p := string(a.Status.Phase)
	if p == "" {
		p = "New"
	}
	if meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionPaused) {
		p += " (paused)"
	}
	if c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionStalled); c != nil && c.Status == "True" && c.Reason != string(a.Status.Phase) {
		p += " (" + c.Reason + ")"
	}
	return p
}

// StepOf is "2/3 50%" while a canary moves, else "".
func StepOf(a *v1alpha1.AppRollout) string {
	c := a.Spec.UpgradeStrategy.Canary
	if a.Status.Phase != v1alpha1.AppDeploying || c == nil || len(c.Steps) == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d %d%%", a.Status.CanaryStep+1, len(c.Steps), a.Status.CanaryWeight)
}

// Request is what a person asks of a rollout (Action is the write a
// reconcile does).
type Request string

const (
	RequestPromote Request = "promote"
	RequestAbort   Request = "abort"
	RequestRetry   Request = "retry"
	RequestPause   Request = "pause"
	RequestResume  Request = "resume"
)

// AllRequests lists every request, in the order Requests answers them.
var AllRequests = []Request{RequestPromote, RequestAbort, RequestRetry, RequestPause, RequestResume}

// Requests are those that do something where the rollout stands, as
// Decide answers them: promote while a canary step's pause, a ready
// preview or an inconclusive analysis holds; abort while an attempt
// changes the Deployment; retry once rolled back (or a rollback failed);
// pause while the rollout moves, resume while paused.
func Requests(a *v1alpha1.AppRollout) []Request {
	st := a.Status
	var out []Request
	if promotable(&st) {
		out = append(out, RequestPromote)
	}
	if Abortable(st.Phase) && st.Attempt > 0 {
		out = append(out, RequestAbort)
	}
	if st.Phase == v1alpha1.AppRolledBack || st.Phase == v1alpha1.AppFailed && st.Rollback != nil && st.Rollback.Done {
		out = append(out, RequestRetry)
	}
	switch {
	case a.Spec.Paused:
		out = append(out, RequestResume)
	case moving(st.Phase):
		out = append(out, RequestPause)
	}
	return out
}

// promotable: something holds the rollout that a promote ends — a
// canary step's pause (its pods ready), a ready preview not yet
// switched, an inconclusive analysis. A promote asked before (pods still
// starting) would wait and end a pause nobody has seen yet.
func promotable(st *v1alpha1.AppRolloutStatus) bool {
	if inconclusive(st) && moving(st.Phase) {
		return true
	}
	if st.Phase != v1alpha1.AppDeploying || st.Rollback != nil {
		return false
	}
	if bg := st.BlueGreen; bg != nil {
		return bg.PreviewReadyAt != nil && bg.SwitchedAt == nil
	}
	return st.PauseStartedAt != nil
}

// Patch is the merge patch that asks for the request: an action
// annotation set to now (a value the controller has not acted on), or
// spec.paused. A resourceVersion locks it to the rollout as read: the API
// server refuses it (409) when the rollout changed since ("" does not).
func Patch(req Request, now time.Time, resourceVersion string) ([]byte, error) {
	md := map[string]any{}
	patch := map[string]any{}
	switch req {
	case RequestPromote, RequestAbort, RequestRetry:
		key := map[Request]string{RequestPromote: v1alpha1.AnnotationPromote, RequestAbort: v1alpha1.AnnotationAbort, RequestRetry: v1alpha1.AnnotationRetry}[req]
		md["annotations"] = map[string]string{key: now.UTC().Format(time.RFC3339Nano)}
	case RequestPause, RequestResume:
		patch["spec"] = map[string]any{"paused": req == RequestPause}
	default:
		return nil, fmt.Errorf("request %q: use one of %v", req, AllRequests)
	}
	if resourceVersion != "" {
		md["resourceVersion"] = resourceVersion
	}
	if len(md) > 0 {
		patch["metadata"] = md
	}
	return json.Marshal(patch)
}
