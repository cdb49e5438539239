package clusterconfig

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/preview"
	"github.com/upshift-dev/upshift/internal/step"
)

// Preview dry-runs the update to the merged spec, so the API server
// judges it against k0s's CRD, and shows the change.
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	live, err := e.dyn.Resource(GVR).Namespace(e.ns).Get(ctx, e.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return []step.Change{{Ref: e.Ref(), Action: step.Update, Note: "it does not exist: the step will fail"}}, nil
	}
	if err != nil {
		return nil, err
	}
	spec, err := canonical(live.Object["spec"])
	if err != nil {
		return nil, err
	}
	want, err := merge(spec, e.patches...)
	if err != nil {
		return nil, err
	}
	next := withSpec(live, want)
	planned, err := e.dyn.Resource(GVR).Namespace(e.ns).Update(ctx, next, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return []step.Change{{Ref: e.Ref(), Action: step.Update, Note: "the server refuses the merged spec: " + err.Error()}}, nil
	}
	d, err := preview.Diff(live, planned)
	if err != nil {
		return nil, err
	}
	if d == "" {
		return []step.Change{{Ref: e.Ref(), Action: step.Unchanged}}, nil
	}
	note := fmt.Sprintf("images, then %d override(s), merged into spec", len(e.spec.Overrides))
	if e.pauseOnly != nil {
		note += "; a new pause image is written first, on its own"
	}
	return []step.Change{{Ref: e.Ref(), Action: step.Update, Diff: d, Note: note}}, nil
}

// Rendered names the ClusterConfig, for preflight: its kind served, the
// credentials allowed to read and update it (and restore it).
func (e *Executor) Rendered(context.Context) ([]step.Ref, []*unstructured.Unstructured, error) {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(GVK)
	o.SetNamespace(e.ns)
	o.SetName(e.name)
	return []step.Ref{e.Ref()}, []*unstructured.Unstructured{o}, nil
}
