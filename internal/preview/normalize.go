package preview

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serverMetadata changes on every write and says nothing about the change.
var serverMetadata = []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink"}

// serverAnnotations are written by controllers, not by the plan.
var serverAnnotations = []string{"deployment.kubernetes.io/revision", "deprecated.daemonset.template.generation"}

// Normalize returns a copy of u fit to compare: the server's bookkeeping
// and the status left out. Secret values are still there: Diff compares
// before it redacts.
func Normalize(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	out := u.DeepCopy()
	for _, f := range serverMetadata {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	if ann := out.GetAnnotations(); ann != nil {
		for _, a := range serverAnnotations {
			delete(ann, a)
		}
		if len(ann) == 0 {
			unstructured.RemoveNestedField(out.Object, "metadata", "annotations")
		} else {
			out.SetAnnotations(ann)
		}
	}
	delete(out.Object, "status")
	return out
}
