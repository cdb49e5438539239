package preview

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/kube"
)

// Normalize returns a copy of u fit to compare: the server's bookkeeping
// (kube.ServerOwnedMetadata, the annotations controllers maintain) and
// the status left out. Secret values are still there: Diff compares
// before it redacts.
func Normalize(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	out := kube.WithoutServerMetadata(u)
	kube.RemoveControllerAnnotations(out)
	delete(out.Object, "status")
	return out
}
