package preflight

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// image checks an image step: its workload and containers exist (or the
// plan creates them), and the credentials may read and patch it.
func (pf *preflight) image(ctx context.Context, path *field.Path, s *v1alpha1.ImageStep) {
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: s.Kind}
	gvr, _, ok := pf.resource(ctx, path, gvk)
	if !ok {
		return
	}
	what := fmt.Sprintf("%s (%s %s/%s)", path, strings.ToLower(s.Kind), s.Namespace, s.Name)
	for _, verb := range []string{"get", "list", "watch", "patch", "update"} {
		pf.need(verb, gvr, s.Namespace, what)
	}
	pf.workloadReads(gvk, s.Namespace, what)
	obj, err := pf.workload(ctx, gvr, s.Namespace, s.Name)
	if apierrors.IsNotFound(err) {
		nerr := pf.namespaceErr(ctx, s.Namespace)
		switch {
		case apierrors.IsNotFound(nerr) && !pf.namespaces[s.Namespace]:
			pf.errs = append(pf.errs, field.NotFound(path.Child("namespace"), s.Namespace+": the namespace does not exist"))
			return
		case nerr != nil && !apierrors.IsNotFound(nerr) && !apierrors.IsForbidden(nerr):
			pf.errs = append(pf.errs, field.InternalError(path.Child("namespace"), fmt.Errorf("get namespace %s: %w", s.Namespace, nerr)))
			return
		}
		if !pf.plannedObject(gvk, s.Namespace, s.Name) {
			pf.errs = append(pf.errs, field.NotFound(path.Child("name"), fmt.Sprintf("%s %s/%s does not exist: check the name, or create it in an earlier step", strings.ToLower(s.Kind), s.Namespace, s.Name)))
		}
		return
	}
	if err != nil {
		if !apierrors.IsForbidden(err) {
			pf.errs = append(pf.errs, field.InternalError(path, err))
		}
		return
	}
	// The plan may itself apply a newer version of the workload, with the
	// container, before this step.
	if planned := pf.plannedVersion(gvk, s.Namespace, s.Name); planned != nil {
		obj = planned
	}
	have := map[string]bool{}
	var names []string
	for _, list := range []string{"containers", "initContainers"} {
		cs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", list)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				n, _ := m["name"].(string)
				have[n] = true
				names = append(names, n)
			}
		}
	}
	var missing []string
	for c := range s.Images {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	sort.Strings(missing)
	for _, c := range missing {
		pf.errs = append(pf.errs, field.NotFound(path.Child("images").Key(c), fmt.Sprintf("%s %s/%s has no container %q; its containers are: %s", strings.ToLower(s.Kind), s.Namespace, s.Name, c, strings.Join(names, ", "))))
	}
}
