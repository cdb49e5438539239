package autopilot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// Poll is how long until a step whose Plan autopilot is still working
// on reads it again: one read of one object.
var Poll = 2 * time.Second

// ErrInvalidSpec: the step cannot be built as written (plan validation
// refuses it first).
var ErrInvalidSpec = errors.New("invalid autopilot step")

// Clients are what the step reads and writes with.
type Clients struct {
	Applier   *kube.Applier
	Dynamic   dynamic.Interface
	Clientset kubernetes.Interface
}

// Executor drives one autopilot Plan.
type Executor struct {
	spec    v1alpha1.AutopilotStep
	owner   string
	timeout time.Duration
	started time.Time
	c       Clients
}

var (
	_ step.Executor  = (*Executor)(nil)
	_ step.Renderer  = (*Executor)(nil)
	_ step.Previewer = (*Executor)(nil)
)

// New builds the step named stepName of attempt. started is when the step
// first started (zero: now): the timeout runs from it, across the calls
// of a step that reports Running and across a driver's restart.
func New(spec v1alpha1.AutopilotStep, attempt step.RunAttempt, stepName string, started time.Time, timeout time.Duration, c Clients) (*Executor, error) {
	switch {
	case timeout <= 0:
		return nil, fmt.Errorf("%w: it needs a positive timeout", ErrInvalidSpec)
	case spec.Version == "" || len(spec.Platforms) == 0:
		return nil, fmt.Errorf("%w: it needs a version and at least one platform", ErrInvalidSpec)
	}
	if started.IsZero() {
		started = time.Now()
	}
	return &Executor{spec: spec, owner: owner(attempt, stepName), timeout: timeout, started: started, c: c}, nil
}

// Targets are none. The Plan is not backed up: a restore could only bring
// back a Plan that ended (another upgrade's, deleted to write ours), and
// autopilot would run it again. The Reverter deletes the step's own Plan
// instead.
func (e *Executor) Targets(context.Context) ([]step.Ref, error) { return nil, nil }

// Run reads the Plan and moves the step on by one move: writes the Plan,
// reports autopilot's progress, or ends. It is safe to call again at any
// point: the Plan's name and annotation are its memory.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	plan, err := e.c.Dynamic.Resource(GVR).Get(ctx, PlanName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return e.start(ctx)
	case err != nil:
		return step.Result{}, fmt.Errorf("read autopilot Plan %s: %w", PlanName, err)
	}
	state, targets := progress(plan)
	if by := plan.GetAnnotations()[StepAnnotation]; by != e.owner {
		return e.other(ctx, plan, by, state)
	}
	switch {
	case Failed(state):
		return step.Failure("autopilot Plan %s ended %s: %s", PlanName, state, describe(state, targets)), nil
	case state == Completed:
		return e.completed(ctx, plan)
	}
	return e.waiting("autopilot Plan %s: %s", PlanName, describe(state, targets)), nil
}

// start writes the Plan, unless every node runs the version already.
func (e *Executor) start(ctx context.Context) (step.Result, error) {
	nodes, err := readNodes(ctx, e.c.Clientset, e.spec.Version)
	if err != nil {
		return step.Result{}, err
	}
	if len(nodes.behind) == 0 {
		return step.Success("every node (%d) runs k0s %s already: no autopilot Plan written", len(nodes.ahead), e.spec.Version), nil
	}
	if e.late() {
		return e.waiting("nodes not on k0s %s: %s", e.spec.Version, nodes.behindText()), nil
	}
	// A create, never an apply: a Plan that appeared since the read (k0s's
	// own updater writes the same name) is never overwritten.
	_, err = e.c.Dynamic.Resource(GVR).Create(ctx, build(e.spec, e.owner, nodes.roles, time.Now()), metav1.CreateOptions{FieldManager: "upshift"})
	if apierrors.IsAlreadyExists(err) {
		return step.Progress(time.Millisecond, "autopilot Plan %s appeared meanwhile: reading it", PlanName), nil
	}
	if err != nil {
		return step.Result{}, fmt.Errorf("write autopilot Plan %s: %w", PlanName, err)
	}
	return step.Progress(Poll, "wrote autopilot Plan %s: %s to k0s %s for %d controller(s) and %d worker(s) (%s)",
		PlanName, e.command(), e.spec.Version, len(nodes.roles.controllers), len(nodes.roles.workers), Reason("")), nil
}

// completed waits until every node reports the version, then deletes the
// Plan: embedded-cluster's order, so a Plan left behind says the nodes
// never caught up.
func (e *Executor) completed(ctx context.Context, plan *unstructured.Unstructured) (step.Result, error) {
	if e.spec.Airgap {
		// An image bundle changes no node's version: done once autopilot is.
		if gone, err := e.delete(ctx, plan); !gone || err != nil {
			return e.lost(err)
		}
		return step.Success("k0s %s's image bundle on every node: autopilot Plan %s completed and deleted", e.spec.Version, PlanName), nil
	}
	nodes, err := readNodes(ctx, e.c.Clientset, e.spec.Version)
	if err != nil {
		return step.Result{}, err
	}
	if missed := untargeted(plan, nodes); len(missed) > 0 {
		return step.Failure("%s, but nodes %s joined after the Plan was written and autopilot will not move them: retry the step to write a Plan for them",
			Reason(Completed), strings.Join(missed, ", ")), nil
	}
	if len(nodes.behind) > 0 {
		return e.waiting("%s; waiting for the nodes to report kubelet %s: %s", Reason(Completed), KubeletVersion(e.spec.Version), nodes.behindText()), nil
	}
	if gone, err := e.delete(ctx, plan); !gone || err != nil {
		return e.lost(err)
	}
	return step.Success("k0s %s on every node (%d): autopilot Plan %s completed and deleted", e.spec.Version, len(nodes.ahead), PlanName), nil
}

// lost is the answer when deleting the Plan failed (err) or found another
// Plan under the name (nil): that one is read next.
func (e *Executor) lost(err error) (step.Result, error) {
	if err != nil {
		return step.Result{}, err
	}
	return step.Progress(time.Millisecond, "another autopilot Plan took the name %s: reading it", PlanName), nil
}

// other handles a Plan this step did not write: one still in progress is
// waited for (never cut short); one that ended is deleted so the step can
// write its own, as embedded-cluster does.
func (e *Executor) other(ctx context.Context, plan *unstructured.Unstructured, by, state string) (step.Result, error) {
	who := "not written by Upshift"
	if by != "" {
		who = "of " + by
	}
	if !Ended(state) {
		return e.waiting("autopilot Plan %s %s is in progress (%s): waiting for it to end", PlanName, who, Reason(state)), nil
	}
	if _, err := e.delete(ctx, plan); err != nil {
		return step.Result{}, err
	}
	return step.Progress(time.Millisecond, "deleted autopilot Plan %s %s, which had ended %s", PlanName, who, state), nil
}

// delete removes plan, that very object (a precondition on its UID); gone
// is false when another Plan has the name now.
func deletePlan(ctx context.Context, dyn dynamic.Interface, plan *unstructured.Unstructured) (gone bool, err error) {
	uid := plan.GetUID()
	err = dyn.Resource(GVR).Delete(ctx, PlanName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return true, nil
	case apierrors.IsConflict(err):
		return false, nil
	}
	return false, fmt.Errorf("delete autopilot Plan %s: %w", PlanName, err)
}

func (e *Executor) delete(ctx context.Context, plan *unstructured.Unstructured) (bool, error) {
	return deletePlan(ctx, e.c.Dynamic, plan)
}

// waiting is a Running result, or the step's failure once its timeout,
// counted from its first start, is spent.
func (e *Executor) waiting(format string, a ...any) step.Result {
	msg := fmt.Sprintf(format, a...)
	if e.late() {
		return step.Failure("timed out after %s: %s", e.timeout, msg)
	}
	return step.Progress(Poll, "%s", msg)
}

func (e *Executor) late() bool { return time.Since(e.started) > e.timeout }

func (e *Executor) command() string {
	if e.spec.Airgap {
		return "airgapupdate"
	}
	return "k0supdate"
}

// Rendered is the Plan the step would write now, for preflight: its kind
// served, the credentials allowed to write it.
func (e *Executor) Rendered(ctx context.Context) ([]step.Ref, []*unstructured.Unstructured, error) {
	nodes, err := readNodes(ctx, e.c.Clientset, e.spec.Version)
	if err != nil {
		return nil, nil, err
	}
	return []step.Ref{Ref}, []*unstructured.Unstructured{build(e.spec, e.owner, nodes.roles, time.Now())}, nil
}
