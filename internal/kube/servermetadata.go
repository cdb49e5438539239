package kube

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ServerOwnedMetadata are the metadata fields the API server sets and
// changes on every write. They say nothing about what an object is: a
// comparison ignores them, and an apply or create must not send them
// (resourceVersion would turn an apply into a compare-and-swap that a
// stale copy loses forever; managedFields must be empty in an apply).
var ServerOwnedMetadata = []string{
	"resourceVersion", "uid", "generation", "creationTimestamp", "managedFields",
	"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds",
}

// ControllerAnnotations are annotations that controllers maintain on
// objects they do not own, by "group/Kind" ("Kind" for the core group, ""
// for every kind): comparisons leave them out.
var ControllerAnnotations = map[string][]string{
	"":               {deploymentRevision},
	"apps/DaemonSet": {appsv1.DeprecatedTemplateGeneration},
}

// WithoutServerMetadata returns a copy of u without ServerOwnedMetadata.
func WithoutServerMetadata(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	for _, f := range ServerOwnedMetadata {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	return c
}

// RemoveControllerAnnotations removes ControllerAnnotations from u, in
// place, and the annotations map itself when nothing else is left in it.
func RemoveControllerAnnotations(u *unstructured.Unstructured) {
	md, _ := u.Object["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		return
	}
	gk := u.GroupVersionKind().GroupKind()
	kind := gk.Kind
	if gk.Group != "" {
		kind = gk.Group + "/" + gk.Kind
	}
	for _, k := range slices.Concat(ControllerAnnotations[""], ControllerAnnotations[kind]) {
		delete(ann, k)
	}
	if len(ann) == 0 {
		delete(md, "annotations")
	}
}
