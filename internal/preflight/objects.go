package preflight

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/internal/resolve"
)

type plannedKind struct {
	resource   string
	namespaced bool
}

// plannedKinds are the kinds the plan's own CRDs define: they are not
// served yet, and need not be.
func plannedKinds(p *resolve.Plan) map[schema.GroupKind]plannedKind {
	out := map[schema.GroupKind]plannedKind{}
	for _, objs := range p.Objects {
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
			scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
			out[schema.GroupKind{Group: group, Kind: kind}] = plannedKind{resource: plural, namespaced: scope == "Namespaced"}
		}
	}
	return out
}

func plannedNamespaces(p *resolve.Plan) map[string]bool {
	out := map[string]bool{}
	for _, objs := range p.Objects {
		for _, o := range objs {
			if o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "" {
				out[o.GetName()] = true
			}
		}
	}
	return out
}

// resource maps a kind to its resource, from the cluster or the plan.
func (pf *preflight) resource(ctx context.Context, path *field.Path, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	m, err := pf.d.Clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err == nil {
		return m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace, true
	}
	if pk, ok := pf.planned[gvk.GroupKind()]; ok {
		return gvk.GroupVersion().WithResource(pk.resource), pk.namespaced, true
	}
	if meta.IsNoMatchError(err) {
		msg := "the cluster does not serve this kind and no CRD in the plan defines it: check apiVersion and kind, or add the CRD to an earlier step"
		if removed, ok := pf.removedAPI(gvk); ok {
			msg = removed
		}
		pf.errs = append(pf.errs, field.Invalid(path, gvk.Kind+" "+gvk.GroupVersion().String(), msg))
	} else {
		pf.errs = append(pf.errs, field.InternalError(path, fmt.Errorf("map %s: %w", gvk, err)))
	}
	return schema.GroupVersionResource{}, false, false
}

func (pf *preflight) objects(ctx context.Context, path *field.Path, objs []*unstructured.Unstructured) {
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		gvr, namespaced, ok := pf.resource(ctx, path, gvk)
		if !ok {
			continue
		}
		if isCRD(o) {
			pf.storedVersions(path, o)
		}
		ns := o.GetNamespace()
		what := fmt.Sprintf("%s (%s %s)", path, strings.ToLower(gvk.Kind), join(ns, o.GetName()))
		if namespaced {
			if ns == "" {
				pf.errs = append(pf.errs, field.Required(path, fmt.Sprintf("%s %s has no metadata.namespace: set it (Upshift never guesses a namespace)", strings.ToLower(gvk.Kind), o.GetName())))
				continue
			}
			pf.namespace(ctx, path, ns)
		}
		if !namespaced {
			ns = ""
		}
		// Writes, and the list/watch the wait for Current needs.
		for _, verb := range []string{"get", "list", "watch", "create", "patch", "update", "delete"} {
			pf.need(verb, gvr, ns, what)
		}
		pf.workloadReads(gvk, ns, what)
	}
}

func (pf *preflight) namespace(ctx context.Context, path *field.Path, ns string) {
	if pf.namespaces[ns] {
		return
	}
	err := pf.namespaceErr(ctx, ns)
	switch {
	case err == nil:
		pf.namespaces[ns] = true
	case apierrors.IsNotFound(err):
		pf.namespaces[ns] = true // report once
		pf.errs = append(pf.errs, field.NotFound(path.Child("namespace"), ns+": create the namespace first, or add a Namespace object to an earlier step"))
	case apierrors.IsForbidden(err):
		// Not knowing is not a reason to refuse: the access review says
		// whether the writes themselves are allowed.
	default:
		pf.errs = append(pf.errs, field.InternalError(path, fmt.Errorf("get namespace %s: %w", ns, err)))
	}
}

// plannedObject reports whether a source of the plan creates the object.
func (pf *preflight) plannedObject(gvk schema.GroupVersionKind, ns, name string) bool {
	return pf.plannedVersion(gvk, ns, name) != nil
}

// plannedVersion is the object as a source of the plan applies it, or nil.
func (pf *preflight) plannedVersion(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	for _, objs := range pf.p.Objects {
		for _, o := range objs {
			if o.GroupVersionKind().GroupKind() == gvk.GroupKind() && o.GetNamespace() == ns && o.GetName() == name {
				return o
			}
		}
	}
	return nil
}

func join(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
