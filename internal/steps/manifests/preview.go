package manifests

import (
	"context"

	"github.com/upshift-dev/upshift/internal/preview"
	"github.com/upshift-dev/upshift/internal/step"
)

var _ step.Previewer = (*Executor)(nil)

// Preview dry-runs the apply of every object.
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	return preview.Apply(ctx, e.applier, e.objs)
}
