package controller

import (
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestDecidePlatform(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	blocked := func(reason string, ago time.Duration) *Blocked {
		return &Blocked{Generation: 2, At: now.Add(-ago), Attempts: 1, Reason: reason}
	}
	tests := []struct {
		name    string
		o       PlatformObserved
		want    PlatformAct
		requeue bool
	}{
		{name: "new", o: PlatformObserved{Generation: 1}, want: PlatformStart},
		{name: "left Running by a stopped controller", o: PlatformObserved{Generation: 1, ObservedGeneration: 1, Phase: v1alpha1.PlatformRunning}, want: PlatformStart},
		{name: "driving", o: PlatformObserved{Generation: 1, Driving: true}, want: PlatformNothing},
		{name: "suspended while driving", o: PlatformObserved{Generation: 1, Driving: true, Suspend: true}, want: PlatformStop},
		{name: "suspended", o: PlatformObserved{Generation: 1, Suspend: true}, want: PlatformNothing},
		{name: "succeeded", o: PlatformObserved{Generation: 2, ObservedGeneration: 2, Phase: v1alpha1.PlatformSucceeded}, want: PlatformNothing},
		{name: "rolled back", o: PlatformObserved{Generation: 2, ObservedGeneration: 2, Phase: v1alpha1.PlatformRolledBack}, want: PlatformNothing},
		{name: "failed", o: PlatformObserved{Generation: 2, ObservedGeneration: 2, Phase: v1alpha1.PlatformFailed}, want: PlatformNothing},
		{name: "rolled back, retry asked", o: PlatformObserved{Generation: 2, ObservedGeneration: 2, Phase: v1alpha1.PlatformRolledBack, RetryRequested: true}, want: PlatformStart},
		{name: "failed, retry asked", o: PlatformObserved{Generation: 2, ObservedGeneration: 2, Phase: v1alpha1.PlatformFailed, RetryRequested: true}, want: PlatformStart},
		{name: "succeeded, retry asked: nothing to retry", o: PlatformObserved{Generation: 2, ObservedGeneration: 2, Phase: v1alpha1.PlatformSucceeded, RetryRequested: true}, want: PlatformNothing},
		{name: "a new target after success", o: PlatformObserved{Generation: 3, ObservedGeneration: 2, Phase: v1alpha1.PlatformSucceeded}, want: PlatformStart},
		{name: "queued, within its backoff", o: PlatformObserved{Generation: 2, Blocked: blocked(v1alpha1.ReasonQueued, time.Second), Now: now}, want: PlatformNothing, requeue: true},
		{name: "queued, backoff over", o: PlatformObserved{Generation: 2, Blocked: blocked(v1alpha1.ReasonQueued, time.Minute), Now: now}, want: PlatformStart},
		{name: "no path yet, within its backoff", o: PlatformObserved{Generation: 2, Blocked: blocked(v1alpha1.ReasonPreflightFailed, time.Second), Now: now}, want: PlatformNothing, requeue: true},
		{name: "an invalid catalog waits for an edit", o: PlatformObserved{Generation: 2, Blocked: blocked(v1alpha1.ReasonInvalid, time.Hour), Now: now}, want: PlatformNothing},
		{name: "a refused hop waits for an edit", o: PlatformObserved{Generation: 2, Blocked: blocked(v1alpha1.ReasonRefused, time.Hour), Now: now}, want: PlatformNothing},
		{name: "blocked at an older generation: the edit starts", o: PlatformObserved{Generation: 3, Blocked: blocked(v1alpha1.ReasonInvalid, time.Second), Now: now}, want: PlatformStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DecidePlatform(tt.o)
			if d.Act != tt.want || (d.RequeueAfter > 0) != tt.requeue || d.Retry != (tt.o.RetryRequested && tt.want == PlatformStart) {
				t.Fatalf("DecidePlatform = %+v, want %s (requeue %v)", d, tt.want, tt.requeue)
			}
		})
	}
}
