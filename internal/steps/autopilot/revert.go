package autopilot

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

// Reverter undoes what it can of the step in a rollback: it deletes the
// step's own Plan (never another's), which stops autopilot from moving
// more nodes, and names the nodes on the version, which it cannot move
// back.
type Reverter struct {
	spec  v1alpha1.AutopilotStep
	owner string
	dyn   dynamic.Interface
	cs    kubernetes.Interface
}

var _ step.Reverter = (*Reverter)(nil)

// NewReverter builds the Reverter of the step named stepName of attempt.
func NewReverter(spec v1alpha1.AutopilotStep, attempt step.RunAttempt, stepName string, dyn dynamic.Interface, cs kubernetes.Interface) *Reverter {
	return &Reverter{spec: spec, owner: owner(attempt, stepName), dyn: dyn, cs: cs}
}

// Revert deletes the Plan if it is the step's and reports the nodes. It
// succeeds: the rest of the stage can still be rolled back.
func (r *Reverter) Revert(ctx context.Context, _ *v1alpha1.BackupRef) (step.Reverted, error) {
	deleted := ""
	plan, err := r.dyn.Resource(GVR).Get(ctx, PlanName, metav1.GetOptions{})
	switch {
	case err == nil && plan.GetAnnotations()[StepAnnotation] == r.owner:
		if _, err := deletePlan(ctx, r.dyn, plan); err != nil {
			return step.Reverted{}, err
		}
		deleted = "; its autopilot Plan deleted"
	case err != nil && !apierrors.IsNotFound(err):
		return step.Reverted{}, fmt.Errorf("read autopilot Plan %s: %w", PlanName, err)
	}
	nodes, err := readNodes(ctx, r.cs, r.spec.Version)
	if err != nil {
		return step.Reverted{}, err
	}
	if len(nodes.ahead) == 0 {
		return step.Reverted{Result: step.Success("k0s: no node runs %s%s", r.spec.Version, deleted)}, nil
	}
	return step.Reverted{Result: step.Success(
		"k0s not rolled back: %s run(s) %s%s (autopilot does not downgrade k0s; nodes the step moved stay there: move them back by hand, or retry the upgrade)",
		strings.Join(nodes.ahead, ", "), r.spec.Version, deleted)}, nil
}
