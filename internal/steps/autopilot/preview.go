package autopilot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/preview"
	"github.com/upshift-dev/upshift/internal/step"
)

// Preview says whether the step writes a Plan and which nodes autopilot
// then upgrades; the Plan is dry-run, so the API server validates it
// against the cluster's Plan CRD.
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	nodes, err := readNodes(ctx, e.c.Clientset, e.spec.Version)
	if err != nil {
		return nil, err
	}
	if len(nodes.behind) == 0 {
		return []step.Change{{Ref: Ref, Action: step.Unchanged,
			Note: fmt.Sprintf("every node (%d) runs k0s %s already: no Plan is written", len(nodes.ahead), e.spec.Version)}}, nil
	}
	changes, err := preview.Apply(ctx, e.c.Applier, []*unstructured.Unstructured{build(e.spec, e.owner, nodes.roles, time.Now())})
	if err != nil {
		return nil, err
	}
	note := fmt.Sprintf("autopilot moves %s to k0s %s (controllers one at a time, then workers: %s); the Plan is deleted once every node reports it; a rollback cannot move k0s back",
		nodes.behindText(), e.spec.Version, strings.Join(nodes.roles.all(), ", "))
	for i := range changes {
		changes[i].Note = note
	}
	return changes, nil
}
