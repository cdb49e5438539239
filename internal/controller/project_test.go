package controller

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// cond is one condition's expected status and reason; "" status: absent.
type cond struct {
	status metav1.ConditionStatus
	reason string
	msg    string // a part of the message
}

// runAt is a run that has just begun the action named (as
// engine.Action.String).
func runAt(action string) *v1alpha1.UpgradeRun {
	r := newRun(true)
	move(r, v1alpha1.RunPending, nil, until("begin "+action))
	return r
}

func TestProject(t *testing.T) {
	running := runAt("step 2/0") // data-plane's proxy
	succeeded := newRun(true)
	move(succeeded, v1alpha1.RunPending, nil, nil)
	failed := newRun(false)
	move(failed, v1alpha1.RunPending, failing("step 0/0", "boom"), nil)
	const gen = 3
	for _, tc := range []struct {
		name    string
		run     *v1alpha1.UpgradeRun
		suspend bool
		blocked *Blocked
		want    map[string]cond // Ready, Reconciling, Stalled
	}{
		// A blocked start that goes on by itself is progressing.
		{name: "queued", blocked: &Blocked{Generation: gen, Reason: v1alpha1.ReasonQueued, Message: "run other is unfinished"}, want: map[string]cond{
			v1alpha1.ConditionReady:       {metav1.ConditionFalse, v1alpha1.ReasonQueued, "run other is unfinished"},
			v1alpha1.ConditionReconciling: {metav1.ConditionTrue, v1alpha1.ReasonQueued, "run other is unfinished"},
		}},
		{name: "unavailable", blocked: &Blocked{Generation: gen, Reason: v1alpha1.ReasonUnavailable, Message: "connection refused"}, want: map[string]cond{
			v1alpha1.ConditionReady:       {metav1.ConditionFalse, v1alpha1.ReasonUnavailable, "connection refused"},
			v1alpha1.ConditionReconciling: {metav1.ConditionTrue, v1alpha1.ReasonUnavailable, "connection refused"},
		}},
		{name: "unavailable, a run stopped", run: failed, blocked: &Blocked{Generation: gen, Reason: v1alpha1.ReasonUnavailable, Message: "connection refused"}, want: map[string]cond{
			v1alpha1.ConditionReady:       {metav1.ConditionFalse, v1alpha1.ReasonUnavailable, "connection refused"},
			v1alpha1.ConditionReconciling: {metav1.ConditionTrue, v1alpha1.ReasonUnavailable, "connection refused"},
		}},
		// One that waits for a person is stalled.
		{name: "invalid", blocked: &Blocked{Generation: gen, Reason: v1alpha1.ReasonInvalid, Message: "spec.stages[0].name: Required"}, want: map[string]cond{
			v1alpha1.ConditionReady:   {metav1.ConditionFalse, v1alpha1.ReasonInvalid, "spec.stages[0].name"},
			v1alpha1.ConditionStalled: {metav1.ConditionTrue, v1alpha1.ReasonInvalid, "spec.stages[0].name"},
		}},
		{name: "preflight failed", blocked: &Blocked{Generation: gen, Reason: v1alpha1.ReasonPreflightFailed, Message: "cannot patch deployments"}, want: map[string]cond{
			v1alpha1.ConditionReady:   {metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed, "cannot patch"},
			v1alpha1.ConditionStalled: {metav1.ConditionTrue, v1alpha1.ReasonPreflightFailed, "cannot patch"},
		}},
		{name: "refused, a run moving", run: running, blocked: &Blocked{Generation: gen, Reason: v1alpha1.ReasonRefused, Message: "the plan changed"}, want: map[string]cond{
			v1alpha1.ConditionReady:   {metav1.ConditionFalse, v1alpha1.ReasonRefused, "the plan changed"},
			v1alpha1.ConditionStalled: {metav1.ConditionTrue, v1alpha1.ReasonRefused, "the plan changed"},
		}},
		// A blocked start of another generation is the past.
		{name: "invalid at another generation", blocked: &Blocked{Generation: gen - 1, Reason: v1alpha1.ReasonInvalid, Message: "x"}, want: map[string]cond{
			v1alpha1.ConditionReady:       {metav1.ConditionFalse, v1alpha1.ReasonPending, ""},
			v1alpha1.ConditionReconciling: {metav1.ConditionTrue, v1alpha1.ReasonPending, ""},
		}},
		{name: "queued at another generation, succeeded", run: succeeded, blocked: &Blocked{Generation: gen + 1, Reason: v1alpha1.ReasonQueued, Message: "x"}, want: map[string]cond{
			v1alpha1.ConditionReady: {metav1.ConditionTrue, v1alpha1.ReasonSucceeded, ""},
		}},
		// Suspended: neither progressing nor (by the suspend) stuck.
		{name: "suspended, moving", run: running, suspend: true, want: map[string]cond{
			v1alpha1.ConditionReady: {metav1.ConditionFalse, v1alpha1.ReasonSuspended, "spec.suspend is true: the run stays where it is (Running at stage data-plane, step proxy)"},
		}},
		{name: "suspended, no run yet", suspend: true, want: map[string]cond{
			v1alpha1.ConditionReady: {metav1.ConditionFalse, v1alpha1.ReasonSuspended, "spec.suspend is true: the run stays where it is"},
		}},
		{name: "suspended, queued", suspend: true, blocked: &Blocked{Generation: gen, Reason: v1alpha1.ReasonQueued, Message: "x"}, want: map[string]cond{
			v1alpha1.ConditionReady: {metav1.ConditionFalse, v1alpha1.ReasonSuspended, "spec.suspend is true"},
		}},
		{name: "suspended, failed", run: failed, suspend: true, want: map[string]cond{
			v1alpha1.ConditionReady:   {metav1.ConditionFalse, v1alpha1.ReasonSuspended, "spec.suspend is true"},
			v1alpha1.ConditionStalled: {metav1.ConditionTrue, v1alpha1.ReasonFailed, "boom"},
		}},
		{name: "suspended, succeeded", run: succeeded, suspend: true, want: map[string]cond{
			v1alpha1.ConditionReady: {metav1.ConditionTrue, v1alpha1.ReasonSucceeded, "reached version 1.1.0"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A status an older generation wrote, with every condition.
			st := &v1alpha1.UpgradePlanStatus{ObservedGeneration: 1}
			for _, c := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled} {
				st.Conditions = append(st.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "Old", ObservedGeneration: 1})
			}
			Project(st, gen, tc.run, tc.suspend, tc.blocked, metav1.NewTime(t0))
			for _, typ := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled} {
				w := tc.want[typ]
				c := meta.FindStatusCondition(st.Conditions, typ)
				switch {
				case c == nil && w.status == "":
				case c == nil:
					t.Errorf("%s absent, want %s %s", typ, w.status, w.reason)
				case w.status == "":
					t.Errorf("%s present (%s %s: %s), want absent", typ, c.Status, c.Reason, c.Message)
				case c.Status != w.status || c.Reason != w.reason || !strings.Contains(c.Message, w.msg):
					t.Errorf("%s %s %s: %q, want %s %s: %q", typ, c.Status, c.Reason, c.Message, w.status, w.reason, w.msg)
				}
			}
			if st.ObservedGeneration != gen {
				t.Errorf("observedGeneration %d, want %d", st.ObservedGeneration, gen)
			}
			for _, c := range st.Conditions {
				if c.ObservedGeneration != gen {
					t.Errorf("%s observedGeneration %d, want %d", c.Type, c.ObservedGeneration, gen)
				}
			}
		})
	}
}

// A restarted controller recovers from the conditions the blocked start
// Project wrote: its reason, message and generation; nothing from a
// condition about the run itself.
func TestBlockedFromStatus(t *testing.T) {
	for _, reason := range []string{v1alpha1.ReasonInvalid, v1alpha1.ReasonPreflightFailed, v1alpha1.ReasonRefused, v1alpha1.ReasonQueued, v1alpha1.ReasonUnavailable} {
		for _, run := range []*v1alpha1.UpgradeRun{nil, runAt("step 2/0")} {
			st := &v1alpha1.UpgradePlanStatus{}
			b := &Blocked{Generation: 4, At: t0, Attempts: 3, Reason: reason, Message: "why: " + reason}
			Project(st, 4, run, false, b, metav1.NewTime(t0))
			got := BlockedFromStatus(st)
			if got == nil {
				t.Errorf("%s (run %v): nothing recovered", reason, run != nil)
				continue
			}
			if got.Generation != 4 || got.Reason != reason || got.Message != b.Message || got.Attempts < 1 || got.At.IsZero() {
				t.Errorf("%s (run %v): recovered %+v, want generation 4, reason %s, message %q", reason, run != nil, *got, reason, b.Message)
			}
		}
	}

	failed, aborted, succeeded := newRun(false), runAt("step 2/0"), newRun(true)
	move(failed, v1alpha1.RunPending, failing("step 0/0", "boom"), nil)
	move(succeeded, v1alpha1.RunPending, nil, nil)
	aborted.Status.Phase = v1alpha1.RunAborted
	for _, tc := range []struct {
		name    string
		run     *v1alpha1.UpgradeRun
		suspend bool
	}{
		{"no run yet", nil, false},
		{"running", runAt("step 2/0"), false},
		{"waiting for an approval", runAt("step 1/0"), false},
		{"failed", failed, false},
		{"aborted", aborted, false},
		{"succeeded", succeeded, false},
		{"suspended", runAt("step 2/0"), true},
	} {
		st := &v1alpha1.UpgradePlanStatus{}
		Project(st, 4, tc.run, tc.suspend, nil, metav1.NewTime(t0))
		if b := BlockedFromStatus(st); b != nil {
			t.Errorf("%s: recovered %+v from Ready %+v", tc.name, *b, meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady))
		}
	}
}
