package freeze

import (
	"context"

	"github.com/upshift-dev/upshift/internal/preview"
	"github.com/upshift-dev/upshift/internal/step"
)

var _ step.Previewer = (*Executor)(nil)

// Preview dry-runs the apply of the policy and its binding (a create, or
// unchanged when a resumed run has them already), each with a note that
// it is lifted when the run ends.
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	changes, err := preview.Apply(ctx, e.applier, e.objects())
	if err != nil {
		return nil, err
	}
	for i := range changes {
		if changes[i].Note == "" {
			changes[i].Note = "denies " + e.spec.Describe() + "; deleted when the run ends"
		}
	}
	return changes, nil
}
