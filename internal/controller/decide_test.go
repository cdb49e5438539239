package controller

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// runIn is a run record in phase.
func runIn(phase v1alpha1.RunPhase) *v1alpha1.UpgradeRun {
	return &v1alpha1.UpgradeRun{ObjectMeta: metav1.ObjectMeta{Name: "web-2"}, Status: v1alpha1.RunStatus{Phase: phase}}
}

func req(annotation, value string) Request { return Request{Annotation: annotation, Value: value} }

func blocked(reason string, generation int64, ago time.Duration, attempts int) *Blocked {
	return &Blocked{Generation: generation, At: t0.Add(-ago), Attempts: attempts, Reason: reason, Message: "why"}
}

// window is a start blocked until a window opens at until.
func window(until time.Time) *Blocked {
	b := blocked(v1alpha1.ReasonWaitingForWindow, 1, time.Minute, 1)
	b.Until = until
	return b
}

func TestDecide(t *testing.T) {
	var (
		approve  = req(v1alpha1.AnnotationApprove, "go-ahead")
		abort    = req(v1alpha1.AnnotationAbort, "1")
		rollback = req(v1alpha1.AnnotationRollback, "1")
		retry    = req(v1alpha1.AnnotationRetry, "1")
	)
	type want struct {
		act     Act
		step    string
		handles *Request
		refusal string // a part of the refusal; "" for none
		requeue time.Duration
	}
	for _, tc := range []struct {
		name string
		o    Observed
		want want
	}{
		// 1. Requests, in annotation order.
		{"approve a step", Observed{Run: runIn(v1alpha1.RunRunning), Requests: []Request{approve}},
			want{act: Approve, step: "go-ahead", handles: &approve}},
		{"approve step@token", Observed{Run: runIn(v1alpha1.RunRunning), Requests: []Request{req(v1alpha1.AnnotationApprove, "go-ahead@2")}},
			want{act: Approve, step: "go-ahead", handles: &Request{v1alpha1.AnnotationApprove, "go-ahead@2"}}},
		{"approve while driving", Observed{Run: runIn(v1alpha1.RunRunning), Driving: true, Requests: []Request{approve}},
			want{act: Approve, step: "go-ahead", handles: &approve}},
		{"approve while suspended", Observed{Run: runIn(v1alpha1.RunRunning), Suspend: true, Requests: []Request{approve}},
			want{act: Approve, step: "go-ahead", handles: &approve}},
		{"approve naming no step", Observed{Run: runIn(v1alpha1.RunRunning), Requests: []Request{req(v1alpha1.AnnotationApprove, "@2")}},
			want{act: Wait, handles: &Request{v1alpha1.AnnotationApprove, "@2"}, refusal: "names no step"}},
		{"abort", Observed{Run: runIn(v1alpha1.RunRunning), Requests: []Request{abort}},
			want{act: Abort, handles: &abort}},
		{"abort while driving", Observed{Run: runIn(v1alpha1.RunRunning), Driving: true, Requests: []Request{abort}},
			want{act: Abort, handles: &abort}},
		{"approve answered before abort", Observed{Run: runIn(v1alpha1.RunRunning), Requests: []Request{approve, abort}},
			want{act: Approve, step: "go-ahead", handles: &approve}},
		{"rollback", Observed{Run: runIn(v1alpha1.RunFailed), Requests: []Request{rollback}},
			want{act: Rollback, handles: &rollback}},
		{"rollback while driving", Observed{Run: runIn(v1alpha1.RunRunning), Driving: true, Requests: []Request{rollback}},
			want{act: Wait, handles: &rollback, refusal: "abort it first (annotate " + v1alpha1.AnnotationAbort + ")"}},
		{"retry while driving", Observed{Run: runIn(v1alpha1.RunRunning), Driving: true, Requests: []Request{retry}},
			want{act: Wait, handles: &retry, refusal: "abort it first (annotate " + v1alpha1.AnnotationAbort + ")"}},
		{"rollback while suspended waits", Observed{Run: runIn(v1alpha1.RunFailed), Suspend: true, Requests: []Request{rollback}},
			want{act: Wait}},
		{"retry while suspended waits", Observed{Run: runIn(v1alpha1.RunRolledBack), Suspend: true, Requests: []Request{retry}},
			want{act: Wait}},
		{"retry while suspended and driving stops", Observed{Run: runIn(v1alpha1.RunFailed), Suspend: true, Driving: true, Requests: []Request{retry}},
			want{act: Wait, handles: &retry, refusal: "abort it first"}},
		{"rollback and retry wait while suspended", Observed{Run: runIn(v1alpha1.RunFailed), Suspend: true, Requests: []Request{rollback, retry}},
			want{act: Wait}},
		{"retry a rolled-back run", Observed{Run: runIn(v1alpha1.RunRolledBack), Requests: []Request{retry}},
			want{act: ApplyRetry, handles: &retry}},
		{"retry a failed run", Observed{Run: runIn(v1alpha1.RunFailed), Requests: []Request{retry}},
			want{act: RetryStep, handles: &retry}},
		{"retry an aborted run", Observed{Run: runIn(v1alpha1.RunAborted), Requests: []Request{retry}},
			want{act: Apply, handles: &retry}},
		{"retry a succeeded run", Observed{Run: runIn(v1alpha1.RunSucceeded), Requests: []Request{retry}},
			want{act: Wait, handles: &retry, refusal: "run web-2 is Succeeded"}},
		{"unknown action", Observed{Run: runIn(v1alpha1.RunRunning), Requests: []Request{req("upshift.dev/frobnicate", "1")}},
			want{act: Wait, handles: &Request{"upshift.dev/frobnicate", "1"}, refusal: "unknown action"}},

		// Without a run, every request is refused.
		{"approve without a run", Observed{Requests: []Request{approve}}, want{act: Wait, handles: &approve, refusal: "no run yet"}},
		{"abort without a run", Observed{Requests: []Request{abort}}, want{act: Wait, handles: &abort, refusal: "no run yet"}},
		{"rollback without a run", Observed{Requests: []Request{rollback}}, want{act: Wait, handles: &rollback, refusal: "no run yet"}},
		{"retry without a run", Observed{Requests: []Request{retry}}, want{act: Wait, handles: &retry, refusal: "no run yet"}},
		{"retry without a run, suspended", Observed{Suspend: true, Requests: []Request{retry}}, want{act: Wait, handles: &retry, refusal: "no run yet"}},

		// 2. Suspended.
		{"suspended while driving", Observed{Run: runIn(v1alpha1.RunRunning), Suspend: true, Driving: true}, want{act: Stop}},
		{"suspended", Observed{Run: runIn(v1alpha1.RunRunning), Suspend: true}, want{act: Wait}},
		{"suspended, no run yet", Observed{Suspend: true, Generation: 1}, want{act: Wait}},
		{"suspended before a blocked start", Observed{Suspend: true, Generation: 1, Blocked: blocked(v1alpha1.ReasonQueued, 1, time.Hour, 1)}, want{act: Wait}},

		// 3. A drive runs.
		{"driving", Observed{Run: runIn(v1alpha1.RunRunning), Driving: true}, want{act: Wait}},
		{"driving a finished, edited plan", Observed{Run: runIn(v1alpha1.RunSucceeded), Driving: true, Generation: 2, ObservedGeneration: 1}, want{act: Wait}},

		// 4. Blocked starts.
		{"queued, 4s ago", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonQueued, 1, 4*time.Second, 1)}, want{act: Wait, requeue: 6 * time.Second}},
		{"queued, 10s ago", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonQueued, 1, 10*time.Second, 1)}, want{act: Apply}},
		{"waiting for a window that opens in 5h", Observed{Generation: 1, Now: t0, Blocked: window(t0.Add(5 * time.Hour))}, want{act: Wait, requeue: 5 * time.Hour}},
		{"the window opened", Observed{Generation: 1, Now: t0, Blocked: window(t0)}, want{act: Apply}},
		{"queued many times, 10s ago", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonQueued, 1, 10*time.Second, 7)}, want{act: Apply}},
		{"preflight failed once, just now", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonPreflightFailed, 1, 0, 1)}, want{act: Wait, requeue: 15 * time.Second}},
		{"preflight, no attempt counted", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonPreflightFailed, 1, 0, 0)}, want{act: Wait, requeue: 15 * time.Second}},
		{"preflight failed twice", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonPreflightFailed, 1, 0, 2)}, want{act: Wait, requeue: 30 * time.Second}},
		{"preflight failed 3 times, 10s ago", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonPreflightFailed, 1, 10*time.Second, 3)}, want{act: Wait, requeue: 50 * time.Second}},
		{"preflight failed 5 times", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonPreflightFailed, 1, 0, 5)}, want{act: Wait, requeue: 240 * time.Second}},
		{"preflight failed 6 times: capped", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonPreflightFailed, 1, 0, 6)}, want{act: Wait, requeue: 5 * time.Minute}},
		{"preflight failed 100 times: capped", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonPreflightFailed, 1, 0, 100)}, want{act: Wait, requeue: 5 * time.Minute}},
		{"preflight failed twice, backoff over", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonPreflightFailed, 1, 30*time.Second, 2)}, want{act: Apply}},
		{"unavailable once", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonUnavailable, 1, 5*time.Second, 1)}, want{act: Wait, requeue: 10 * time.Second}},
		{"unavailable 4 times", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonUnavailable, 1, 0, 4)}, want{act: Wait, requeue: 120 * time.Second}},
		{"unavailable 9 times: capped", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonUnavailable, 1, time.Minute, 9)}, want{act: Wait, requeue: 4 * time.Minute}},
		{"unavailable, backoff over", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonUnavailable, 1, time.Hour, 9)}, want{act: Apply}},
		{"unavailable while a run moves", Observed{Generation: 1, Now: t0, Run: runIn(v1alpha1.RunRunning), Blocked: blocked(v1alpha1.ReasonUnavailable, 1, 0, 1)}, want{act: Wait, requeue: 15 * time.Second}},
		{"invalid, just now", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonInvalid, 1, 0, 1)}, want{act: Wait}},
		{"invalid, long ago", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonInvalid, 1, 24*time.Hour, 1)}, want{act: Wait}},
		{"refused, long ago", Observed{Generation: 1, Now: t0, Blocked: blocked(v1alpha1.ReasonRefused, 1, 24*time.Hour, 3)}, want{act: Wait}},
		{"refused, while a run moves", Observed{Generation: 1, Now: t0, Run: runIn(v1alpha1.RunRunning), Blocked: blocked(v1alpha1.ReasonRefused, 1, 0, 1)}, want{act: Wait}},
		{"invalid at an older generation", Observed{Generation: 2, Now: t0, Blocked: blocked(v1alpha1.ReasonInvalid, 1, 0, 1)}, want{act: Apply}},
		{"queued at an older generation", Observed{Generation: 2, ObservedGeneration: 2, Now: t0, Run: runIn(v1alpha1.RunSucceeded), Blocked: blocked(v1alpha1.ReasonQueued, 1, 0, 1)}, want{act: Wait}},

		// 5. No run yet, or a run on the move: apply.
		{"no run yet", Observed{Generation: 1}, want{act: Apply}},
		{"a finished run of this generation pruned", Observed{Generation: 1, Pruned: true}, want{act: Wait}},
		{"pruned, then the plan edited", Observed{Generation: 2, ObservedGeneration: 1}, want{act: Apply}},
		{"pending", Observed{Generation: 1, ObservedGeneration: 1, Run: runIn(v1alpha1.RunPending)}, want{act: Apply}},
		{"phase not saved yet", Observed{Generation: 1, ObservedGeneration: 1, Run: runIn("")}, want{act: Apply}},
		{"running", Observed{Generation: 1, ObservedGeneration: 1, Run: runIn(v1alpha1.RunRunning)}, want{act: Apply}},
		{"rolling back", Observed{Generation: 1, ObservedGeneration: 1, Run: runIn(v1alpha1.RunRollingBack)}, want{act: Apply}},
		// Stopped runs wait for an operator's request, also when the
		// plan was edited (an edit is no request to resume).
		{"failed", Observed{Generation: 1, ObservedGeneration: 1, Run: runIn(v1alpha1.RunFailed)}, want{act: Wait}},
		{"aborted", Observed{Generation: 1, ObservedGeneration: 1, Run: runIn(v1alpha1.RunAborted)}, want{act: Wait}},
		{"rollback failed", Observed{Generation: 1, ObservedGeneration: 1, Run: runIn(v1alpha1.RunRollbackFailed)}, want{act: Wait}},
		{"failed, plan edited", Observed{Generation: 2, ObservedGeneration: 1, Run: runIn(v1alpha1.RunFailed)}, want{act: Wait}},
		{"aborted, plan edited", Observed{Generation: 2, ObservedGeneration: 1, Run: runIn(v1alpha1.RunAborted)}, want{act: Wait}},
		{"rollback failed, plan edited", Observed{Generation: 2, ObservedGeneration: 1, Run: runIn(v1alpha1.RunRollbackFailed)}, want{act: Wait}},

		// 6. A finished run of an edited plan: apply.
		{"succeeded, plan edited", Observed{Generation: 2, ObservedGeneration: 1, Run: runIn(v1alpha1.RunSucceeded)}, want{act: Apply}},
		{"rolled back, plan edited", Observed{Generation: 2, ObservedGeneration: 1, Run: runIn(v1alpha1.RunRolledBack)}, want{act: Apply}},

		// 7. Otherwise wait.
		{"succeeded", Observed{Generation: 2, ObservedGeneration: 2, Run: runIn(v1alpha1.RunSucceeded)}, want{act: Wait}},
		{"rolled back", Observed{Generation: 2, ObservedGeneration: 2, Run: runIn(v1alpha1.RunRolledBack)}, want{act: Wait}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.o)
			if d.Act != tc.want.act || d.Step != tc.want.step || d.RequeueAfter != tc.want.requeue {
				t.Errorf("act %s step %q requeue %s (%s), want act %s step %q requeue %s", d.Act, d.Step, d.RequeueAfter, d.Why, tc.want.act, tc.want.step, tc.want.requeue)
			}
			switch {
			case tc.want.handles == nil && d.Handles != nil:
				t.Errorf("handles %+v, want none", *d.Handles)
			case tc.want.handles != nil && (d.Handles == nil || *d.Handles != *tc.want.handles):
				t.Errorf("handles %+v, want %+v", d.Handles, *tc.want.handles)
			}
			if tc.want.refusal == "" && d.Refusal != "" || !strings.Contains(d.Refusal, tc.want.refusal) {
				t.Errorf("refusal %q, want one with %q", d.Refusal, tc.want.refusal)
			}
			if d.Why == "" {
				t.Error("no Why for the debug log")
			}
		})
	}
}

func TestActDrives(t *testing.T) {
	for act, drives := range map[Act]bool{
		Wait: false, Stop: false, Approve: false, Abort: false,
		Apply: true, ApplyRetry: true, RetryStep: true, Rollback: true,
	} {
		if act.Drives() != drives {
			t.Errorf("%s.Drives() = %v, want %v", act, act.Drives(), drives)
		}
	}
}
