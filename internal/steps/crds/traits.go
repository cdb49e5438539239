package crds

import (
	"github.com/upshift-dev/upshift/internal/step"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Traits of the kind (step.Traits). A crds step applies its CRDs through
// the Applier and changes nothing else but how their kinds are served; its
// sources name them.
var Traits = step.Traits{ApplierOnly: true, Confined: true, NamesUpFront: true}

var _ step.Reacher = (*Executor)(nil)

// Reach is the groups of its CRDs: how their objects are served
// (defaults, pruning, versions) may change with them.
func (e *Executor) Reach() step.Reach {
	var r step.Reach
	seen := map[string]bool{}
	for _, crd := range e.crds {
		if g, _, _ := unstructured.NestedString(crd.Object, "spec", "group"); g != "" && !seen[g] {
			seen[g] = true
			r.Groups = append(r.Groups, g)
		}
	}
	return r
}
