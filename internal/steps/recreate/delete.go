package recreate

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// recreate deletes the old objects, applies `from` again, and waits until
// every object is back and Current.
func (e *Executor) recreate(outer context.Context, b *budget.Budget, f *found) (step.Result, error) {
	ctx := b.Context()
	fromKeys := e.fromKeys()
	oldUIDs := f.oldUIDs()
	var byOwner, byFrom int
	var deletedFrom []*unstructured.Unstructured
	for _, ns := range f.namespaces {
		for _, o := range f.old[ns] {
			if err := e.delete(ctx, o); err != nil {
				return b.Verdict(err)
			}
			if fromKeys[key(o.GetNamespace(), o.GetName())] {
				deletedFrom = append(deletedFrom, o)
			} else {
				byOwner++
			}
		}
	}
	if len(e.from) > 0 {
		for _, o := range deletedFrom {
			if err := e.waitGone(ctx, o); err != nil {
				return b.Verdict(err)
			}
		}
		for _, o := range e.from {
			if _, err := e.Applier.Apply(ctx, o); err != nil {
				return b.Verdict(fmt.Errorf("apply again: %w", err))
			}
			if o.GroupVersionKind().GroupKind() == e.gvk.GroupKind() {
				byFrom++
			}
		}
		for _, o := range e.from {
			if _, err := e.Waiter.WaitCurrent(outer, kube.RefOf(o), b.Left()); err != nil {
				return b.Verdict(err)
			}
		}
	}
	for _, ns := range f.namespaces {
		if f.expected[ns] == 0 && len(f.old[ns]) == 0 {
			continue
		}
		res, err := e.waitBack(outer, ns, oldUIDs, f.expected[ns], b.Left())
		if err != nil || res.Status != step.Succeeded {
			if err != nil {
				return b.Verdict(err)
			}
			return step.Failure("%s not back: %s", e.what(), e.stepTimeout(res.Message)), nil
		}
	}
	return step.Success("%s", e.report(f, byOwner, byFrom)), nil
}

// report says what was re-created and how.
func (e *Executor) report(f *found, byOwner, byFrom int) string {
	var how []string
	if byOwner > 0 {
		how = append(how, fmt.Sprintf("%d by their owners", byOwner))
	}
	if byFrom > 0 {
		how = append(how, fmt.Sprintf("%d from manifests", byFrom))
	}
	if done := len(f.namespaces) > 0 && f.oldCount() == 0; done || len(how) == 0 {
		return fmt.Sprintf("%s in %s already re-created, all Current", e.what(), strings.Join(f.namespaces, ", "))
	}
	return fmt.Sprintf("re-created %s in %s (%s), all Current", e.what(), strings.Join(f.namespaces, ", "), strings.Join(how, ", "))
}

// delete deletes one object, only if it is still the one that was listed
// (a UID precondition: never the replacement), and its dependents first
// (foreground), so a re-applied Deployment does not meet the old pods.
func (e *Executor) delete(ctx context.Context, o *unstructured.Unstructured) error {
	ri, err := e.resource(o.GetNamespace())
	if err != nil {
		return err
	}
	uid := o.GetUID()
	fg := metav1.DeletePropagationForeground
	err = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &fg})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("delete %s: %w", kube.RefOf(o), err)
}

// waitGone waits until the object o was is no longer there (a new one of
// the same name may be), on the run's shared informer: the waits for the
// objects applied again read the same one.
func (e *Executor) waitGone(ctx context.Context, o *unstructured.Unstructured) error {
	return e.Waiter.WaitGone(ctx, o, 0)
}

// stepTimeout reports the step's timeout in a wait's timeout message: the
// wait was given only what was left of it.
func (e *Executor) stepTimeout(msg string) string {
	rest, ok := strings.CutPrefix(msg, "timed out after ")
	if !ok {
		return msg
	}
	if _, after, ok := strings.Cut(rest, ": "); ok {
		return "timed out after " + kube.ShortDuration(e.timeout) + ": " + after
	}
	return msg
}
