// Package step is the contract between the engine's driver and the step
// kinds: executors and gates report results as data; what a kind adds to
// a stage's backup, rollback or preflight is asked of it through optional
// interfaces (Seeder, Previewer, Renderer, Keeper, Reverter, Finisher);
// what the driver gives the kinds of the run itself is Runs and Waits. It
// holds nothing else, so the driver and every kind depend on it and not
// on each other: the runner builds kinds only through the registry
// (internal/steps) and never imports a kind.
package step

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/object"
)

// Ref names one object a step touches.
type Ref = object.Ref

// Status of a step or a gate.
type Status string

const (
	Succeeded Status = "Succeeded"
	Failed    Status = "Failed"
	// Running: the step is not done and is to be asked again (Run called
	// again) after Result.After; its message says how far it is. A step
	// that takes long (a canary's pause, a plan of an hour) returns it
	// instead of holding its goroutine for the whole wait. Run must then
	// be safe to call again, as it is after a crash.
	Running Status = "Running"
)

// Result is what an executor or a gate reports. An expected failure (a
// crash-looping pod, a gate that does not pass, a timeout) is a Failed
// result with a message, not an error.
type Result struct {
	Status  Status
	Message string
	// After is how long until a Running step is asked again.
	After time.Duration
}

// Progress builds a Running result, to be asked again after after.
func Progress(after time.Duration, format string, a ...any) Result {
	return Result{Status: Running, Message: fmt.Sprintf(format, a...), After: after}
}

// Success and Failure build results.
func Success(format string, a ...any) Result {
	return Result{Status: Succeeded, Message: fmt.Sprintf(format, a...)}
}

func Failure(format string, a ...any) Result {
	return Result{Status: Failed, Message: fmt.Sprintf(format, a...)}
}

// RunAttempt names the run and the attempt (apply --retry starts a new
// one) an executor acts for. A step kind whose objects outlive an attempt
// (a Job) marks them with it, so a new attempt does not take the work of
// an earlier one, undone by that attempt's rollback, for its own. The
// zero value marks nothing (previews, tests of one step alone).
type RunAttempt struct {
	Run     string
	Attempt int
}

// ErrWaiting: the step waits for an operator (an approval) or for time
// (a pause) and its driver asked not to wait. The run stops as saved and
// resumes later.
var ErrWaiting = errors.New("waiting")

// Executor performs one step.
type Executor interface {
	// Targets names every object the step may change or create, so the
	// stage's backup holds them before anything changes. It changes nothing.
	Targets(ctx context.Context) ([]Ref, error)
	// Run makes the change and waits until it holds, within the step's
	// timeout. It is idempotent: after a crash it is called again and
	// finishes the job. Transient API errors are retried inside; an error
	// is returned only when ctx ends or the call cannot go on at all (bad
	// credentials, a malformed object).
	Run(ctx context.Context) (Result, error)
}

// Finisher is an executor whose change lasts only as long as its run (a
// freeze). Finish undoes it once the run has ended, whatever the outcome
// (succeeded, failed, rolled back, aborted): the driver calls it before it
// saves the run as ended, so an ended run never leaves it behind, even
// when the process is killed in between. It is idempotent: what is undone
// already is success. A run that goes on after it ended (a retry, a
// resumed abort) runs the succeeded step again (Run is idempotent), so the
// change holds for the rest of the run.
type Finisher interface {
	Finish(ctx context.Context) error
}

// Gate checks health after a stage's steps.
type Gate interface {
	// Check waits, within the gate's timeout, until the condition holds
	// (Succeeded) or cannot hold (Failed).
	Check(ctx context.Context) (Result, error)
}

// Action is what a preview says a step will do to one object.
type Action string

const (
	Create    Action = "create"
	Update    Action = "update"
	Unchanged Action = "unchanged"
	Delete    Action = "delete"
	Recreate  Action = "recreate"
	// RunJob: the step runs a Job to completion (the Job is created anew).
	RunJob Action = "run"
	// Wait: the step waits (an approval, a pause) and changes nothing.
	Wait Action = "wait"
)

// Change is one object in a preview: what will happen to it and, for an
// update or a create, a unified diff from the live object to the server's
// dry run of the change (Secret values redacted).
type Change struct {
	Ref    Ref    `json:"ref"`
	Action Action `json:"action"`
	Diff   string `json:"diff,omitempty"`
	// Note explains what the diff cannot say: why there is no dry run
	// (its namespace or kind comes from an earlier step), what re-creates
	// an object.
	Note string `json:"note,omitempty"`
}

// Seeder is an executor that can start from its targets as the stage's
// backup read them a moment before, instead of reading them again. copies
// answers like backup.Snapshot.Held; the executor must not change what it
// answers. A copy may be out of date by the time Run writes: an executor
// that takes one writes only on the condition that the object is still at
// the copy's resourceVersion, and reads it afresh when it is not.
type Seeder interface {
	Seed(copies func(Ref) (obj *unstructured.Unstructured, held bool))
}

// Previewer is an executor that can say, without changing anything, what
// Run would change.
type Previewer interface {
	Preview(ctx context.Context) ([]Change, error)
}
