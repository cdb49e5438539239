package helm

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/preview"
	"github.com/upshift-dev/upshift/internal/step"
)

var _ step.Previewer = (*Executor)(nil)

// Preview diffs the release's latest manifest against the chart rendered
// with the step's values (Helm's own dry run), object by object: what the
// upgrade creates, changes and deletes.
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	now, next, latest, err := e.manifests(ctx)
	if err != nil {
		return nil, err
	}
	note := fmt.Sprintf("release %s/%s: not installed", e.spec.Namespace, e.spec.Release)
	if latest != nil {
		note = fmt.Sprintf("release %s/%s: revision %d (chart %s %s) to chart %s %s",
			e.spec.Namespace, e.spec.Release, latest.Revision, latest.Chart, latest.ChartVersion, e.chart.Name(), e.chart.Metadata.Version)
	}
	before := map[step.Ref]*unstructured.Unstructured{}
	for _, o := range now {
		before[kube.RefOf(o)] = o
	}
	after := map[step.Ref]*unstructured.Unstructured{}
	for _, o := range next {
		after[kube.RefOf(o)] = o
	}
	var out []step.Change
	for _, r := range refsOf(now, next) {
		d, err := preview.Diff(before[r], after[r])
		if err != nil {
			return nil, err
		}
		c := step.Change{Ref: r, Diff: d, Note: note}
		switch {
		case before[r] == nil:
			c.Action = step.Create
		case after[r] == nil:
			c.Action = step.Delete
		case d == "":
			c.Action = step.Unchanged
		default:
			c.Action = step.Update
		}
		out = append(out, c)
	}
	return out, nil
}
