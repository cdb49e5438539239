package job

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/step"
)

var _ step.Previewer = (*Executor)(nil)

// Preview says which Job runs, with which images. A dry run would say
// nothing more: the Job is created anew and its effect is its program's.
func (e *Executor) Preview(context.Context) ([]step.Change, error) {
	var images []string
	cs, _, _ := unstructured.NestedSlice(e.job.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok {
			if img, ok := m["image"].(string); ok {
				images = append(images, img)
			}
		}
	}
	note := "runs to completion"
	if len(images) > 0 {
		note += " (" + strings.Join(images, ", ") + ")"
	}
	return []step.Change{{Ref: e.ref, Action: step.RunJob, Note: note}}, nil
}
