package distribute

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/preview"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/step"
)

// Preview dry-runs each node's Job (their env values redacted: the dry
// run judges the shape) and the Secret (without its values).
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	_, objs, err := e.Rendered(ctx)
	if err != nil {
		return nil, err
	}
	shown := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		shown[i] = redact.EnvValues(o)
	}
	changes, err := preview.Apply(ctx, e.c.Applier, shown)
	if err != nil {
		return nil, err
	}
	for i := range changes {
		if changes[i].Ref.Kind == "Job" {
			changes[i].Action = step.RunJob
			changes[i].Note = fmt.Sprintf("runs %s on node %s, with %s mounted at %s; deleted once every node's Job succeeded",
				e.spec.Image, shown[i].GetAnnotations()["upshift.dev/node"], e.hostPath(), e.mountPath())
		} else {
			changes[i].Note = "holds the secretEnv values while the Jobs run; deleted after them"
		}
	}
	return changes, nil
}
