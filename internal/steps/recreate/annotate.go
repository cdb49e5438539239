package recreate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// annotate sets Annotation on every matched object that lacks this
// step's value (so a resumed step patches only the rest), then waits until
// each is Current again: its operator reacts to the change.
func (e *Executor) annotate(outer context.Context, b *budget.Budget, f *found, since time.Time) (step.Result, error) {
	ctx := b.Context()
	token := since.UTC().Format(time.RFC3339)
	applier := e.Applier.WithFieldManager(FieldManager)
	var all []*unstructured.Unstructured
	patched := 0
	for _, ns := range f.namespaces {
		for _, o := range append(append([]*unstructured.Unstructured{}, f.old[ns]...), f.fresh[ns]...) {
			all = append(all, o)
			if o.GetAnnotations()[Annotation] == token {
				continue
			}
			patch := &unstructured.Unstructured{}
			patch.SetAPIVersion(o.GetAPIVersion())
			patch.SetKind(o.GetKind())
			patch.SetNamespace(o.GetNamespace())
			patch.SetName(o.GetName())
			patch.SetAnnotations(map[string]string{Annotation: token})
			if _, err := applier.Apply(ctx, patch); err != nil {
				return b.Verdict(fmt.Errorf("annotate: %w", err))
			}
			patched++
		}
	}
	for _, o := range all {
		if _, err := e.Waiter.WaitCurrent(outer, kube.RefOf(o), b.Left()); err != nil {
			return b.Verdict(err)
		}
	}
	return step.Success("annotated %d %s in %s (%s=%s; %d already had it), all Current",
		len(all), e.what(), strings.Join(f.namespaces, ", "), Annotation, token, len(all)-patched), nil
}
