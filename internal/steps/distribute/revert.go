package distribute

import (
	"context"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

// Reverter deletes, in a rollback, every Job of the step and its Secret:
// those of nodes that joined after the stage's backup too, which the
// restore does not know of.
type Reverter struct{ e *Executor }

var _ step.Reverter = (*Reverter)(nil)

// NewReverter builds the Reverter of the step e runs.
func NewReverter(e *Executor) *Reverter { return &Reverter{e: e} }

// Revert deletes them; the artifacts copied stay on the nodes' disks
// (nothing reads them before the next step).
func (r *Reverter) Revert(ctx context.Context, _ *v1alpha1.BackupRef) (step.Reverted, error) {
	if err := r.e.cleanup(ctx); err != nil {
		return step.Reverted{}, err
	}
	return step.Reverted{Result: step.Success("distribute: the artifact Jobs and their Secret deleted (files already copied stay on the nodes)")}, nil
}
