package runner

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
)

// The actor answers the backups' questions about a stage's steps
// (stageObjects) by building their executors.
var _ stageObjects = (*actor)(nil)

// targets lists the objects every step of the stage names. A step whose
// spec does not build is an *invalidStepError.
func (a *actor) targets(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) ([]step.Ref, error) {
	var refs []step.Ref
	for i := range a.plan.Plan.Spec.Stages[stage].Steps {
		ex, err := a.executor(r, stage, i)
		if err != nil {
			return nil, &invalidStepError{err}
		}
		t, err := ex.Targets(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the objects step %s touches: %w", a.plan.Plan.Spec.Stages[stage].Steps[i].Name, err)
		}
		refs = append(refs, t...)
	}
	return refs, nil
}

// invalidStepError: a step's spec does not build an executor.
type invalidStepError struct{ error }

func (e *invalidStepError) Unwrap() error { return e.error }

// kept reads what the stage's kinds keep in its backup besides its
// objects (step.Keeper: the Helm releases' revisions).
func (a *actor) kept(ctx context.Context, stage int) ([]v1alpha1.HelmRevision, error) {
	var out []v1alpha1.HelmRevision
	for i := range a.plan.Plan.Spec.Stages[stage].Steps {
		k := steps.NewKeeper(a.input(nil, stage, i), a.deps)
		if k == nil {
			continue
		}
		rev, err := k.Keep(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, rev)
	}
	return out, nil
}

// reach is what the stage's steps change besides their targets, as each
// executor that is a step.Reacher says. A step whose spec does not build
// reaches nothing: its stage fails before it runs.
func (a *actor) reach(r *v1alpha1.UpgradeRun, stage int) step.Reach {
	var out step.Reach
	for i := range a.plan.Plan.Spec.Stages[stage].Steps {
		ex, err := a.executor(r, stage, i)
		if err != nil {
			continue
		}
		if rc, ok := ex.(step.Reacher); ok {
			reach := rc.Reach()
			out.Kinds = append(out.Kinds, reach.Kinds...)
			out.Groups = append(out.Groups, reach.Groups...)
		}
	}
	return out
}

// cachedMeta looks an object up in the run's informers, which the waits
// of the stages before started (backup.MetaLookup).
func (a *actor) cachedMeta(ref step.Ref) (*metav1.ObjectMeta, bool) {
	gvk := ref.GroupVersionKind()
	m, err := a.deps.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, false
	}
	uid, rv, found, known := a.deps.Waiter.CachedMeta(m.Resource, ref.Namespace, ref.Name)
	switch {
	case !known:
		return nil, false
	case !found:
		return nil, true
	}
	return &metav1.ObjectMeta{UID: uid, ResourceVersion: rv}, true
}
