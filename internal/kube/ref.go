package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/internal/object"
)

// ObjectRef names one object to wait for.
type ObjectRef = object.Ref

// SelectorRef names every object of a kind that matches a label selector.
type SelectorRef struct {
	APIVersion string
	Kind       string
	Namespace  string // empty: all namespaces (and cluster-scoped kinds)
	Selector   string // label selector in kubectl syntax, e.g. "app=web,tier!=db"
}

// GroupVersionKind parses APIVersion and Kind.
func (r SelectorRef) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
}

// String is the form used in messages: `deployments matching "app=web" in demo`.
func (r SelectorRef) String() string {
	s := fmt.Sprintf("%ss matching %q", strings.ToLower(r.Kind), r.Selector)
	if r.Namespace != "" {
		s += " in " + r.Namespace
	}
	return s
}
