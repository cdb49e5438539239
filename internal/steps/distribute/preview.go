package distribute

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/preview"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/step"
)

// Preview says which Jobs run where, each dry-run (its env values
// redacted: the dry run judges the shape) so the API server judges it,
// and shows no diff of them: a live Job of that name (an earlier
// attempt's) holds env values a diff would print. The Secret is
// previewed without its values.
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	_, objs, err := e.Rendered(ctx)
	if err != nil {
		return nil, err
	}
	var changes []step.Change
	for _, o := range objs {
		if o.GetKind() != "Job" {
			c, err := preview.Apply(ctx, e.c.Applier, []*unstructured.Unstructured{o})
			if err != nil {
				return nil, err
			}
			c[0].Note = "holds the secretEnv values while the Jobs run; deleted after them"
			changes = append(changes, c...)
			continue
		}
		ch := step.Change{Ref: kube.RefOf(o), Action: step.RunJob, Note: fmt.Sprintf("runs %s on node %s, with %s mounted at %s; deleted once every node's Job succeeded",
			e.spec.Image, o.GetAnnotations()["upshift.dev/node"], e.hostPath(), e.mountPath())}
		if _, err := e.c.Applier.DryRunApply(ctx, redact.EnvValues(o)); err != nil {
			ch.Note = "the server refuses it now: " + err.Error()
		}
		changes = append(changes, ch)
	}
	return changes, nil
}
