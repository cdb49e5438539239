package recreate

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// namespaces are the namespaces the step's pattern matches, sorted. A name
// without * is taken as is (it may not exist: nothing matches then).
func (e *Executor) namespaces(ctx context.Context) ([]string, error) {
	if !strings.Contains(e.spec.Namespace, "*") {
		return []string{e.spec.Namespace}, nil
	}
	list, err := e.Clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list namespaces for %q: %w", e.spec.Namespace, err)
	}
	var out []string
	for _, ns := range list.Items {
		if ok, _ := path.Match(e.spec.Namespace, ns.Name); ok { // the pattern was validated
			out = append(out, ns.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// matched lists the step's objects in one namespace, terminating ones left
// out (they are on their way out already).
func (e *Executor) matched(ctx context.Context, ns string) ([]*unstructured.Unstructured, error) {
	ri, err := e.resource(ns)
	if err != nil {
		return nil, err
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: e.spec.Selector})
	if err != nil {
		return nil, fmt.Errorf("list %ss in %s: %w", strings.ToLower(e.spec.Kind), ns, err)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		if list.Items[i].GetDeletionTimestamp() == nil {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// fresh tells an object created after the step started (re-created by
// an earlier try of the step) from an old one. creationTimestamp has
// second precision: an object created in the second the step started
// counts as old, so a resumed step may re-create it once more, which is
// harmless, rather than skip one that predates the step.
func fresh(o *unstructured.Unstructured, since time.Time) bool {
	return o.GetCreationTimestamp().Time.After(since.Truncate(time.Second))
}

// controller is the object's controlling owner reference, if any.
func controller(o *unstructured.Unstructured) *metav1.OwnerReference {
	for _, r := range o.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return &r
		}
	}
	return nil
}
