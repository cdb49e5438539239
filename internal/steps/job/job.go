package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// FieldManager creates the Jobs this step runs.
const FieldManager = kube.JobFieldManager

// diagnoseTimeout bounds the reads that explain a failure (pods, logs),
// which may come after the step's own time is spent.
const diagnoseTimeout = 10 * time.Second

// Executor runs one Job to completion.
type Executor struct {
	job     *unstructured.Unstructured // marked with attempt
	ref     step.Ref
	timeout time.Duration
	applier *kube.Applier // as FieldManager
	waiter  *kube.Waiter
	cs      kubernetes.Interface

	attempt step.RunAttempt
	// rollback: the Job is a down-migration, which every rollback must
	// run itself (see Run).
	rollback bool
}

var _ step.Executor = (*Executor)(nil)

// ErrNoTimeout: a job step needs a positive timeout (the caller applies
// the step's default).
var ErrNoTimeout = errors.New("a job step needs a positive timeout")

// New checks that objs, the decoded source of the step, are one Job with a
// name and a namespace. at is the run attempt the Job is created for.
func New(spec v1alpha1.JobStep, objs []*unstructured.Unstructured, timeout time.Duration, at step.RunAttempt, a *kube.Applier, w *kube.Waiter, cs kubernetes.Interface) (*Executor, error) {
	return newExecutor(spec.Source, objs, timeout, at, a, w, cs)
}

func newExecutor(src v1alpha1.Source, objs []*unstructured.Unstructured, timeout time.Duration, at step.RunAttempt, a *kube.Applier, w *kube.Waiter, cs kubernetes.Interface) (*Executor, error) {
	if timeout <= 0 {
		return nil, ErrNoTimeout
	}
	j, err := jobOf(src, objs)
	if err != nil {
		return nil, err
	}
	return &Executor{
		job:     marked(j, at),
		ref:     kube.RefOf(j),
		attempt: at,
		timeout: timeout,
		applier: a.WithFieldManager(FieldManager),
		waiter:  w,
		cs:      cs,
	}, nil
}

// Targets is the Job, so the stage's backup records whether it existed.
func (e *Executor) Targets(context.Context) ([]step.Ref, error) {
	return []step.Ref{e.ref}, nil
}

// Run creates the Job unless this attempt already did, then waits until
// it completes. A Job an earlier attempt of the run left is deleted and
// created anew: that attempt's rollback undid its work. A Job made by hand
// is judged by its name and spec, as a migration someone already ran; one
// another run made is refused (that run's rollback may have undone it),
// and a down-migration must be this rollback's own, or the rollback would
// report a restore whose schema never went back.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	b := budget.Start(ctx, e.timeout)
	defer b.Stop()
	existing, err := e.existing(b.Context())
	if err != nil {
		return b.Verdict(fmt.Errorf("run %s: %w", e.ref, err))
	}
	replaced := ""
	if existing != nil {
		switch originOf(existing.GetAnnotations(), e.attempt) {
		case earlierAttempt:
			replaced = existing.GetAnnotations()[AnnotationAttempt]
			if err := e.deleteEarlier(b.Context(), existing); err != nil {
				return b.Verdict(fmt.Errorf("run %s: %w", e.ref, err))
			}
			existing = nil
		case foreign:
			if e.rollback {
				return step.Failure("%s exists and this rollback did not create it (%s), so the down-migration would not run: "+
					"delete that Job (keep its logs first if they matter), then roll back again", e.ref, describeOrigin(existing.GetAnnotations())), nil
			}
			if existing.GetAnnotations()[AnnotationRun] != "" {
				// Another run's migration: that run's rollback may have
				// undone it, so its completion says nothing of the schema
				// now. A Job made by hand still counts as the migration.
				return step.Failure("%s exists and this run did not create it (%s): that run's rollback may have undone it, so it does not count as this run's migration: "+
					"delete that Job (keep its logs first if they matter), then apply again", e.ref, describeOrigin(existing.GetAnnotations())), nil
			}
		}
	}
	if existing == nil {
		if _, err := e.applier.Apply(b.Context(), e.job); err != nil {
			return b.Verdict(fmt.Errorf("run %s: %w", e.ref, err))
		}
	} else {
		same, err := e.sameSpec(b.Context(), existing)
		if err != nil {
			return b.Verdict(fmt.Errorf("run %s: %w", e.ref, err))
		}
		if !same {
			return step.Failure("%s already exists with a different spec; a Job is not updated once created "+
				"(its pod template is immutable): give the new migration a new Job name", e.ref), nil
		}
		if completed(existing) {
			return step.Success("%s already completed; not run again", e.ref), nil
		}
	}
	res, err := e.wait(ctx, b)
	if replaced != "" && res.Message != "" {
		res.Message += fmt.Sprintf(" (the Job of attempt %s was deleted and run again)", replaced)
	}
	return res, err
}

// wait waits until the Job completes, and explains why it did not.
func (e *Executor) wait(ctx context.Context, b *budget.Budget) (step.Result, error) {
	_, err := e.waiter.WaitCurrent(ctx, e.ref, b.Left())
	if err == nil {
		return step.Success("%s completed", e.ref), nil
	}
	res, verr := b.Verdict(err)
	if verr != nil || ctx.Err() != nil {
		return res, verr
	}
	dctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	if errors.Is(err, kube.ErrFailing) {
		res.Message = e.explainFailure(dctx, res.Message)
	} else {
		res.Message = e.explainWaiting(dctx, res.Message)
	}
	return res, nil
}
