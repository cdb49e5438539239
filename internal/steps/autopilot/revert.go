package autopilot

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

// Reverter says, in a rollback, what the stage's restore cannot undo: k0s
// on the nodes autopilot already moved to the version. The restore that
// follows deletes the Plan, which stops autopilot from moving more.
type Reverter struct {
	spec v1alpha1.AutopilotStep
	cs   kubernetes.Interface
}

var _ step.Reverter = (*Reverter)(nil)

// NewReverter builds the step's Reverter.
func NewReverter(spec v1alpha1.AutopilotStep, cs kubernetes.Interface) *Reverter {
	return &Reverter{spec: spec, cs: cs}
}

// Revert names the nodes left on the version. It succeeds: nothing here
// can be undone, and the rest of the stage still can.
func (r *Reverter) Revert(ctx context.Context, _ *v1alpha1.BackupRef) (step.Reverted, error) {
	nodes, err := readNodes(ctx, r.cs, r.spec.Version)
	if err != nil {
		return step.Reverted{}, err
	}
	if len(nodes.ahead) == 0 {
		return step.Reverted{Result: step.Success("k0s: no node runs %s; the autopilot Plan is removed", r.spec.Version)}, nil
	}
	return step.Reverted{Result: step.Success(
		"k0s not rolled back: %s run(s) %s (autopilot does not downgrade k0s; move them back by hand, or retry the upgrade)",
		strings.Join(nodes.ahead, ", "), fmt.Sprint(r.spec.Version))}, nil
}
