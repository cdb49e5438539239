// Package object names Kubernetes objects. It is the leaf every layer
// shares (kube, the step contract, backups, previews), so none of them
// needs to import another for a name.
package object

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Ref names one object.
type Ref struct {
	APIVersion string `json:"apiVersion"`          // e.g. "apps/v1"
	Kind       string `json:"kind"`                // e.g. "Deployment"
	Namespace  string `json:"namespace,omitempty"` // empty for cluster-scoped kinds
	Name       string `json:"name"`
}

// GroupVersionKind parses APIVersion and Kind.
func (r Ref) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
}

// String is the form messages use: "deployment demo/web".
func (r Ref) String() string {
	k := strings.ToLower(r.Kind)
	if r.Namespace == "" {
		return k + " " + r.Name
	}
	return fmt.Sprintf("%s %s/%s", k, r.Namespace, r.Name)
}
