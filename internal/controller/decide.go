package controller

import (
	"fmt"
	"strings"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Act is what a reconcile does with a plan.
type Act string

const (
	// Wait: nothing to do until something changes.
	Wait Act = "wait"
	// Stop: the plan is suspended; stop its drive (the run is saved as
	// interrupted and resumes when the plan is resumed).
	Stop Act = "stop"
	// Apply starts the plan's run or resumes it (`upshift apply`).
	Apply Act = "apply"
	// ApplyRetry starts a rolled-back run over (`upshift apply --retry`).
	ApplyRetry Act = "apply-retry"
	// RetryStep retries the failed step of a run that failed without
	// rollback (`upshift retry`).
	RetryStep Act = "retry-step"
	// Rollback undoes the stages the run changed (`upshift rollback`).
	Rollback Act = "rollback"
	// Approve approves an approval step (`upshift approve`).
	Approve Act = "approve"
	// Abort stops the run where it is (`upshift abort`).
	Abort Act = "abort"
)

// Drives tells whether an act runs as a drive (a goroutine that holds the
// lease) rather than as one write made within the reconcile.
func (a Act) Drives() bool {
	switch a {
	case Apply, ApplyRetry, RetryStep, Rollback:
		return true
	}
	return false
}

// Request is an action annotation with a value not yet handled.
type Request struct {
	Annotation, Value string
}

// Blocked is a run that could not start or resume, and why: it is kept (in
// memory, and in the plan's conditions across restarts) so the controller
// neither hammers the cluster nor forgets why the plan does not move.
type Blocked struct {
	// Generation is the plan's generation the attempt was made at.
	Generation int64
	At         time.Time
	// Attempts counts attempts at this generation, for the backoff.
	Attempts int
	Reason   string // v1alpha1.Reason{Invalid,PreflightFailed,Refused,Queued,WaitingForWindow}
	Message  string
	// Until is when a start waiting for a window may be tried again.
	Until time.Time
}

// Observed is what a reconcile saw of one plan.
type Observed struct {
	Generation int64
	// ObservedGeneration is the plan's status.observedGeneration: the
	// generation this controller last reconciled.
	ObservedGeneration int64
	Suspend            bool
	// Run is the plan's run record; nil before the plan ever ran.
	Run *v1alpha1.UpgradeRun
	// Pruned: the plan's status records a finished run at this
	// generation, and that run is gone (--keep-runs pruned it, or an
	// operator deleted it). The outcome stays in the status.
	Pruned bool
	// Driving: this process drives the plan's run now.
	Driving bool
	// Blocked is the last attempt that could not start, if any.
	Blocked *Blocked
	// Requests are the action annotations with new values, in the order
	// of v1alpha1.ActionAnnotations.
	Requests []Request
	Now      time.Time
}

// Decision is what to do, and which request it answers.
type Decision struct {
	Act Act
	// Step is the approval step to approve (Approve).
	Step string
	// Handles is the request acted on, or refused; the reconcile records
	// its value in status.handledActions either way.
	Handles *Request
	// Refusal says why the request cannot be acted on (then Act is Wait).
	Refusal string
	// RequeueAfter asks for another look after a backoff (a blocked start).
	RequeueAfter time.Duration
	// Why says in words why this act, for the debug log.
	Why string
}

// Backoffs of a start that could not begin. A preflight problem is often
// fixed without editing the plan (a RoleBinding added), so it is tried
// again, more and more rarely; a queued run is tried soon (and also woken
// when the run before it ends). An invalid or refused plan waits for an
// edit of the plan or an operator's action.
const (
	queuedRetry       = 10 * time.Second
	preflightRetry    = 15 * time.Second
	maxPreflightRetry = 5 * time.Minute
)

// Decide picks one thing to do with a plan. It is pure: every rule below
// is table-tested. A reconcile acts on one decision and, when it handled a
// request, looks again at once, so several requests are answered in turn.
//
// Rules, first match wins:
//  1. A request is answered first, in annotation order: approve and abort
//     are writes made at once (also while the run is driven); rollback and
//     retry start a drive, so they are refused while a drive runs (abort
//     first) and wait while the plan is suspended.
//  2. Suspended: stop the drive, if any; otherwise wait.
//  3. A drive runs: wait for it.
//  4. A blocked start at this generation waits out its backoff (invalid
//     and refused plans wait for an edit).
//  5. A finished run of this generation pruned: wait. A plan is applied
//     at most once per generation, so a GitOps repository that keeps
//     more finished plans than --keep-runs never runs one again.
//  6. No run yet, or a run on the move (pending, running, rolling back:
//     a drive stopped by a restart or a suspend): apply, which resumes it.
//     A run that failed, was aborted or whose rollback failed waits for
//     an operator's request, as with the CLI.
//  7. A finished run's plan edited since it was last reconciled: apply,
//     which either finds nothing to do or refuses the changed content.
//     (An edit is no request: a stopped run still waits, rule 6.)
//  8. Otherwise wait: the run is finished, or stopped for an operator.
func Decide(o Observed) Decision {
	for _, req := range o.Requests {
		if d, ok := answer(o, req); ok {
			return d
		}
	}
	switch {
	case o.Suspend && o.Driving:
		return Decision{Act: Stop, Why: "the plan is suspended"}
	case o.Suspend:
		return Decision{Act: Wait, Why: "the plan is suspended"}
	case o.Driving:
		return Decision{Act: Wait, Why: "the run is being driven"}
	}
	if b := o.Blocked; b != nil && b.Generation == o.Generation {
		if wait, ok := backoff(b, o.Now); ok {
			return Decision{Act: Wait, RequeueAfter: wait, Why: "blocked: " + b.Reason}
		}
		if b.Reason == v1alpha1.ReasonInvalid || b.Reason == v1alpha1.ReasonRefused {
			return Decision{Act: Wait, Why: "blocked until the plan is edited: " + b.Reason}
		}
		return Decision{Act: Apply, Why: "trying a blocked start again: " + b.Reason}
	}
	switch {
	case o.Run == nil && o.Pruned:
		return Decision{Act: Wait, Why: "the plan's finished run was pruned: a plan is applied once per generation"}
	case o.Run == nil:
		return Decision{Act: Apply, Why: "no run yet"}
	case moving(o.Run):
		return Decision{Act: Apply, Why: fmt.Sprintf("run %s is %s", o.Run.Name, phaseOf(o.Run))}
	case o.Generation != o.ObservedGeneration && o.Run.Status.Phase.Finished():
		return Decision{Act: Apply, Why: fmt.Sprintf("the plan changed (generation %d, last reconciled %d)", o.Generation, o.ObservedGeneration)}
	}
	return Decision{Act: Wait, Why: fmt.Sprintf("run %s is %s", o.Run.Name, phaseOf(o.Run))}
}

// answer decides about one request; ok is false for a request that waits
// (a rollback or retry while the plan is suspended).
func answer(o Observed, req Request) (Decision, bool) {
	refuse := func(why string) (Decision, bool) {
		return Decision{Act: Wait, Handles: &req, Refusal: why, Why: "refused " + req.Annotation}, true
	}
	act := func(a Act) (Decision, bool) {
		return Decision{Act: a, Handles: &req, Why: req.Annotation + "=" + req.Value}, true
	}
	if o.Run == nil {
		return refuse("the plan has no run yet")
	}
	switch req.Annotation {
	case v1alpha1.AnnotationApprove:
		step, _, _ := strings.Cut(req.Value, "@")
		if step == "" {
			return refuse("the value names no step: annotate with the approval step's name")
		}
		d, ok := act(Approve)
		d.Step = step
		return d, ok
	case v1alpha1.AnnotationAbort:
		return act(Abort)
	case v1alpha1.AnnotationRollback, v1alpha1.AnnotationRetry:
		if o.Driving {
			return refuse(fmt.Sprintf("run %s is moving: abort it first (annotate %s)", o.Run.Name, v1alpha1.AnnotationAbort))
		}
		if o.Suspend {
			return Decision{}, false
		}
		if req.Annotation == v1alpha1.AnnotationRollback {
			return act(Rollback)
		}
		switch o.Run.Status.Phase {
		case v1alpha1.RunRolledBack:
			return act(ApplyRetry)
		case v1alpha1.RunFailed:
			return act(RetryStep)
		case v1alpha1.RunAborted:
			return act(Apply) // resumes where the abort stopped it
		}
		return refuse(fmt.Sprintf("run %s is %s: retry moves a rolled-back, failed or aborted run", o.Run.Name, phaseOf(o.Run)))
	}
	return refuse("unknown action")
}

// backoff is how long a blocked start still waits; ok is false once it
// may be tried again (or, for an invalid or refused plan, never by time).
func backoff(b *Blocked, now time.Time) (time.Duration, bool) {
	var every time.Duration
	switch b.Reason {
	case v1alpha1.ReasonWaitingForWindow:
		if left := b.Until.Sub(now); left > 0 {
			return left, true
		}
		return 0, false
	case v1alpha1.ReasonQueued:
		every = queuedRetry
	case v1alpha1.ReasonPreflightFailed, v1alpha1.ReasonUnavailable:
		every = preflightRetry
		for i := 1; i < b.Attempts && every < maxPreflightRetry; i++ {
			every *= 2
		}
		every = min(every, maxPreflightRetry)
	default:
		return 0, false
	}
	if left := b.At.Add(every).Sub(now); left > 0 {
		return left, true
	}
	return 0, false
}

// moving tells a run that goes on by itself once driven.
func moving(r *v1alpha1.UpgradeRun) bool {
	switch phaseOf(r) {
	case v1alpha1.RunPending, v1alpha1.RunRunning, v1alpha1.RunRollingBack:
		return true
	}
	return false
}

func phaseOf(r *v1alpha1.UpgradeRun) v1alpha1.RunPhase {
	if r.Status.Phase == "" {
		return v1alpha1.RunPending
	}
	return r.Status.Phase
}
