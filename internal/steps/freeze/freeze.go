package freeze

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// ErrInvalidSpec: the step cannot be built as written (plan validation
// refuses it first).
var ErrInvalidSpec = errors.New("invalid freeze step")

// LiftTimeout bounds Finish: two deletes and the wait until the API
// server no longer enforces the policy (its informer's delay).
const LiftTimeout = time.Minute

// Executor freezes for one step.
type Executor struct {
	spec      v1alpha1.FreezeStep
	run, step string
	name      string
	timeout   time.Duration
	applier   *kube.Applier
	dyn       dynamic.Interface
	runs      step.Runs
}

var (
	_ step.Executor = (*Executor)(nil)
	_ step.Finisher = (*Executor)(nil)
)

// New builds the step of run (its name; the plan's, before the run
// starts) named stepName.
func New(spec v1alpha1.FreezeStep, run, stepName string, timeout time.Duration, applier *kube.Applier, dyn dynamic.Interface, runs step.Runs) (*Executor, error) {
	switch {
	case timeout <= 0:
		return nil, fmt.Errorf("%w: it needs a positive timeout", ErrInvalidSpec)
	case run == "":
		return nil, fmt.Errorf("%w: it needs its run's name, which names the policy", ErrInvalidSpec)
	case runs.Namespace == "":
		return nil, fmt.Errorf("%w: it needs the runs namespace, which the policy leaves alone", ErrInvalidSpec)
	case len(spec.Rules) == 0:
		return nil, fmt.Errorf("%w: it needs at least one rule", ErrInvalidSpec)
	}
	return &Executor{spec: spec, run: run, step: stepName, name: Name(runs.Namespace, run, stepName), timeout: timeout,
		applier: applier, dyn: dyn, runs: runs}, nil
}

// Name is the name of the step's policy and binding.
func (e *Executor) Name() string { return e.name }

// Targets are the policy and its binding: absent in the stage's backup,
// so a rollback of the stage deletes them.
func (e *Executor) Targets(context.Context) ([]step.Ref, error) { return e.refs(), nil }

// Run writes the policy and its binding and returns once the API server
// enforces them (the probe is denied): a freeze that reports success is in
// force, not on its way. Writing again what is there changes nothing, so a
// resumed or re-run step is harmless.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	b := budget.Start(ctx, e.timeout)
	defer b.Stop()
	for _, o := range e.objects() {
		if _, err := e.applier.Apply(b.Context(), o); err != nil {
			return b.Verdict(err)
		}
	}
	if err := e.await(b.Context(), true); err != nil {
		return b.Verdict(err)
	}
	return step.Success("frozen until the run ends: %s (ValidatingAdmissionPolicy %s)", e.spec.Describe(), e.name), nil
}

// Finish lifts the freeze: it deletes the binding, then the policy, and
// returns once the API server no longer enforces them. What is gone
// already is success, so it may be called any number of times.
func (e *Executor) Finish(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, LiftTimeout)
	defer cancel()
	refs := e.refs()
	for i := len(refs) - 1; i >= 0; i-- {
		if err := e.delete(ctx, refs[i]); err != nil {
			return fmt.Errorf("lift freeze %s: %w", e.name, err)
		}
	}
	if err := e.await(ctx, false); err != nil {
		return fmt.Errorf("lift freeze %s: deleted, but %w", e.name, err)
	}
	return nil
}

// liftBackoff spaces the retries of a delete that met an API server
// blip: a few seconds in all, then the error is the caller's.
var liftBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 6, Cap: 3 * time.Second}

func (e *Executor) delete(ctx context.Context, r step.Ref) error {
	gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: resourceOf(r.Kind)}
	err := kube.Retry(ctx, liftBackoff, kube.Transient, func(int) error {
		err := e.dyn.Resource(gvr).Delete(ctx, r.Name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("delete %s: %w", r, err)
	}
	return nil
}

func resourceOf(kind string) string {
	if kind == BindingKind {
		return "validatingadmissionpolicybindings"
	}
	return "validatingadmissionpolicies"
}
