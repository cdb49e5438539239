package apiscan

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/internal/apiremovals"
)

// target is a resource to list, through a version the cluster serves,
// for objects last applied in a removed version.
type target struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// What names the resource for messages: "horizontalpodautoscalers.autoscaling
// (autoscaling/v2)".
func (t target) What() string {
	return t.GVR.GroupResource().String() + " (" + t.GVR.GroupVersion().String() + ")"
}

// targets picks from discovery (one version per group, the preferred
// one) the resources that may hold objects of the removals: the removed
// kind in its own group or its replacement's, listable, not a
// subresource. Kinds served in neither are left out; each resource once.
func targets(lists []*metav1.APIResourceList, removals []apiremovals.Removal) []target {
	groups := map[string][]string{} // kind → the groups it may be served in
	for _, r := range removals {
		gs := []string{r.Kind.Group}
		if r.Replacement != "" {
			if gv, err := schema.ParseGroupVersion(r.Replacement); err == nil {
				gs = append(gs, gv.Group)
			}
		}
		for _, g := range gs {
			if !slices.Contains(groups[r.Kind.Kind], g) {
				groups[r.Kind.Kind] = append(groups[r.Kind.Kind], g)
			}
		}
	}
	var out []target
	seen := map[schema.GroupResource]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range l.APIResources {
			gr := schema.GroupResource{Group: gv.Group, Resource: res.Name}
			if strings.Contains(res.Name, "/") || seen[gr] || !slices.Contains(groups[res.Kind], gv.Group) || !slices.Contains(res.Verbs, "list") {
				continue
			}
			seen[gr] = true
			out = append(out, target{GVR: gv.WithResource(res.Name), Kind: res.Kind, Namespaced: res.Namespaced})
		}
	}
	return out
}

// neededGroups are the API groups the removals' kinds may be served in:
// a group whose discovery failed among them leaves kinds unchecked.
func neededGroups(removals []apiremovals.Removal) map[string]bool {
	out := map[string]bool{}
	for _, r := range removals {
		out[r.Kind.Group] = true
		if gv, err := schema.ParseGroupVersion(r.Replacement); err == nil && r.Replacement != "" {
			out[gv.Group] = true
		}
	}
	return out
}
