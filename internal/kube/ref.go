package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectRef names one object to wait for.
type ObjectRef struct {
	APIVersion string // e.g. "apps/v1"
	Kind       string // e.g. "Deployment"
	Namespace  string // empty for cluster-scoped kinds
	Name       string
}

// GroupVersionKind parses APIVersion and Kind.
func (r ObjectRef) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
}

// String is the form used in messages: "deployment demo/web".
func (r ObjectRef) String() string {
	return describe(r.Kind, r.Namespace, r.Name)
}

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

// describe renders kind and name the way messages show them.
func describe(kind, namespace, name string) string {
	k := strings.ToLower(kind)
	if namespace == "" {
		return k + " " + name
	}
	return k + " " + namespace + "/" + name
}
