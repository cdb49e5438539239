package image

import (
	"github.com/upshift-dev/upshift/internal/step"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Traits of the kind (step.Traits). An image step patches its workload
// through the Applier, changes nothing but its pod template (and what the
// rollout does), and names its workload in its spec.
var Traits = step.Traits{ApplierOnly: true, Confined: true, NamesUpFront: true}

var _ step.Reacher = (*Executor)(nil)

// Reach is what a rollout writes besides its workload.
func (e *Executor) Reach() step.Reach {
	return step.Reach{Kinds: []schema.GroupKind{
		{Kind: "Pod"},
		{Group: "apps", Kind: "ReplicaSet"},
		{Group: "apps", Kind: "ControllerRevision"},
		{Group: "discovery.k8s.io", Kind: "EndpointSlice"},
	}}
}
