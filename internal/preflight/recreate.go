package preflight

import (
	"context"
	"fmt"
	"path"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// recreate checks a recreate step: its kind is served and namespaced, and
// the credentials may list, watch and delete (or patch) it in every
// namespace the pattern matches now — a pattern is resolved, never turned
// into a cluster-wide permission. Its `from` objects are checked as any
// manifests are.
func (pf *preflight) recreate(ctx context.Context, p *field.Path, r *v1alpha1.RecreateStep, from []*unstructured.Unstructured) {
	pf.objects(ctx, p.Child("from"), from)
	gvk := schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
	gvr, namespaced, ok := pf.resource(ctx, p, gvk)
	if !ok {
		return
	}
	if !namespaced {
		pf.errs = append(pf.errs, field.Invalid(p.Child("kind"), r.Kind, "cluster-scoped: recreate works on namespaced kinds"))
		return
	}
	nss := []string{r.Namespace}
	what := fmt.Sprintf("%s (%ss in %s)", p, strings.ToLower(r.Kind), r.Namespace)
	if strings.Contains(r.Namespace, "*") {
		pf.need("list", schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", what)
		all, err := pf.allNamespaces(ctx)
		if err != nil {
			// A forbidden list is reported by the access check; any other
			// failure leaves the pattern unresolved, and a check that
			// cannot look must not pass.
			if !apierrors.IsForbidden(err) {
				pf.errs = append(pf.errs, field.InternalError(p.Child("namespace"), fmt.Errorf("list namespaces to match %q: %w", r.Namespace, err)))
			}
			return
		}
		nss = nss[:0]
		for _, ns := range all {
			if ok, _ := path.Match(r.Namespace, ns.Name); ok {
				nss = append(nss, ns.Name)
			}
		}
	}
	verbs := []string{"get", "list", "watch", "delete"}
	if r.Mode == "annotate" {
		verbs = []string{"get", "list", "watch", "patch"}
	}
	for _, ns := range nss {
		for _, verb := range verbs {
			pf.need(verb, gvr, ns, what)
		}
		pf.workloadReads(gvk, ns, what)
	}
}
