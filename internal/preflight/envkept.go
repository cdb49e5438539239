package preflight

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/gates/envkept"
	"github.com/upshift-dev/upshift/internal/step"
)

// envKept checks an envKept gate: a step of its stage names the workload
// among its targets (so the stage's backup holds it as it was: the gate
// compares with nothing else), the workload has the container (live, or
// as a source of the plan applies it), and the credentials may read it.
func (pf *preflight) envKept(ctx context.Context, p *field.Path, stage int, g *v1alpha1.EnvKeptGate) {
	ref := envkept.Ref(*g)
	gvr, _, ok := pf.resource(ctx, p, ref.GroupVersionKind())
	if !ok {
		return
	}
	pf.need("get", gvr, g.Namespace, p.String())
	if targets, known := pf.stageTargets(ctx, stage); known && !targetsHold(targets, ref) {
		st := pf.p.Plan.Spec.Stages[stage]
		pf.errs = append(pf.errs, field.Invalid(p, ref.String(),
			fmt.Sprintf("no step of stage %q changes it, so the stage's backup does not hold it: %s", st.Name, envkept.StageHint)))
		return
	}
	// Most often the workload of an image step of the stage: read once.
	live, err := pf.workload(ctx, gvr, g.Namespace, g.Name)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
		// Created by the stage (nothing to keep), or not ours to read:
		// the access review says so.
		return
	case err != nil:
		pf.errs = append(pf.errs, field.InternalError(p, fmt.Errorf("get %s: %w", ref, err)))
		return
	}
	have, all := containers(live)
	if planned := pf.plannedVersion(ref.GroupVersionKind(), g.Namespace, g.Name); planned != nil {
		more, _ := containers(planned)
		for c := range more {
			have[c] = true
		}
	}
	if !have[g.Container] {
		pf.errs = append(pf.errs, field.Invalid(p.Child("container"), g.Container,
			fmt.Sprintf("%s has no such container; its containers are: %s", ref, strings.Join(all, ", "))))
	}
}

// stageTargets are the objects the stage's steps name, as its backup will
// take them, listed once per stage. known is false when a step cannot list
// them yet (its own check reports why).
func (pf *preflight) stageTargets(ctx context.Context, stage int) (refs []step.Ref, known bool) {
	if refs, ok := pf.targets[stage]; ok {
		return refs, refs != nil
	}
	pf.targets[stage] = nil
	all := []step.Ref{}
	for i := range pf.p.Plan.Spec.Stages[stage].Steps {
		ex, err := pf.d.Executor(stage, i)
		if err != nil {
			return nil, false
		}
		t, err := ex.Targets(ctx)
		if err != nil {
			return nil, false
		}
		all = append(all, t...)
	}
	pf.targets[stage] = all
	return all, true
}

// targetsHold tells whether refs name the workload (any version of its group).
func targetsHold(refs []step.Ref, w step.Ref) bool {
	gk := w.GroupVersionKind().GroupKind()
	for _, r := range refs {
		if r.GroupVersionKind().GroupKind() == gk && r.Namespace == w.Namespace && r.Name == w.Name {
			return true
		}
	}
	return false
}

// containers are the names of a pod template's containers and init
// containers, as a set and in order.
func containers(w *unstructured.Unstructured) (map[string]bool, []string) {
	have := map[string]bool{}
	var order []string
	for _, list := range []string{"containers", "initContainers"} {
		cs, _, _ := unstructured.NestedSlice(w.Object, "spec", "template", "spec", list)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				n, _ := m["name"].(string)
				have[n] = true
				order = append(order, n)
			}
		}
	}
	return have, order
}
