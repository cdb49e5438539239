package controller

import (
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// PlatformObserved is what a reconcile saw of one PlatformUpgrade.
type PlatformObserved struct {
	Generation, ObservedGeneration int64
	Suspend                        bool
	// Phase is the status's phase (as a previous drive, or a previous
	// controller process, left it).
	Phase v1alpha1.PlatformPhase
	// Driving: this process drives the upgrade's hops now.
	Driving bool
	// Blocked is the last start that could not go on, if any.
	Blocked *Blocked
	// RetryRequested: a new upshift.dev/retry value waits to be answered.
	RetryRequested bool
	Now            time.Time
}

// PlatformAct is what a reconcile does with a PlatformUpgrade.
type PlatformAct string

const (
	PlatformNothing PlatformAct = "nothing"
	PlatformStart   PlatformAct = "start" // drive the hops: resume, solve, run
	PlatformStop    PlatformAct = "stop"  // suspended: the running hop saved as interrupted
)

// PlatformDecision is an act and why.
type PlatformDecision struct {
	Act PlatformAct
	// Retry: the start gives the failed hop a new attempt.
	Retry        bool
	Why          string
	RequeueAfter time.Duration
}

// DecidePlatform decides what to do with a PlatformUpgrade. Rules, in
// order:
//
//  1. Suspended: a drive stops (its hop saved as interrupted); nothing
//     starts.
//  2. A drive of this process moves it: nothing (the drive wakes the
//     reconcile after each transition of its hops).
//  3. Ended at this generation at a failed hop (RolledBack, Failed) and
//     a retry asked for (upshift.dev/retry): start again, the failed hop
//     with a new attempt (fresh backups) or, not rolled back, its failed
//     step retried.
//  4. Ended at this generation (Succeeded, RolledBack, Failed): nothing;
//     a new target (an edit of the spec) starts again.
//  5. Blocked at this generation: wait out the backoff (queued behind
//     another run, a preflight or a peer that may change, the API
//     unavailable); an invalid catalog or a refused hop waits for an edit.
//  6. Otherwise (new, or left Running by a stopped controller): start a
//     drive. It resumes an unfinished hop before anything else.
func DecidePlatform(o PlatformObserved) PlatformDecision {
	switch {
	case o.Suspend && o.Driving:
		return PlatformDecision{Act: PlatformStop, Why: "suspended"}
	case o.Suspend:
		return PlatformDecision{Act: PlatformNothing, Why: "suspended"}
	case o.Driving:
		return PlatformDecision{Act: PlatformNothing, Why: "driving"}
	}
	failed := o.Phase == v1alpha1.PlatformRolledBack || o.Phase == v1alpha1.PlatformFailed
	if failed && o.ObservedGeneration == o.Generation && o.RetryRequested {
		return PlatformDecision{Act: PlatformStart, Retry: true, Why: "retry requested"}
	}
	ended := o.Phase == v1alpha1.PlatformSucceeded || failed
	if ended && o.ObservedGeneration == o.Generation {
		return PlatformDecision{Act: PlatformNothing, Why: "ended: " + string(o.Phase)}
	}
	if b := o.Blocked; b != nil && b.Generation == o.Generation {
		if wait, ok := backoff(b, o.Now); ok {
			return PlatformDecision{Act: PlatformNothing, Why: "blocked: " + b.Reason, RequeueAfter: wait}
		}
		if b.Reason == v1alpha1.ReasonInvalid || b.Reason == v1alpha1.ReasonRefused {
			return PlatformDecision{Act: PlatformNothing, Why: "blocked until the spec changes: " + b.Reason}
		}
	}
	return PlatformDecision{Act: PlatformStart, Why: "the target is not reached"}
}
