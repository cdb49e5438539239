package preflight

import (
	"context"
	"fmt"
	"math"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/internal/apiremovals"
	"github.com/upshift-dev/upshift/internal/versions"
)

func isCRD(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// crdWrite is the plan's first write of a CRD, where it is in the plan.
type crdWrite struct {
	path *field.Path
	next *unstructured.Unstructured
}

// storedVersions notes the plan's first write of a CRD, for
// compareStoredVersions. Only that write is compared with the live CRD: a
// later write follows the plan's own changes (a Job between them may
// migrate), which preflight cannot foresee.
func (pf *preflight) storedVersions(path *field.Path, next *unstructured.Unstructured) {
	name := next.GetName()
	if pf.crdsSeen[name] {
		return
	}
	pf.crdsSeen[name] = true
	pf.crdWrites = append(pf.crdWrites, crdWrite{path: path, next: next})
}

// compareStoredVersions refuses a CRD that drops a version its live copy
// still lists in status.storedVersions: the API server would refuse the
// update anyway, but mid-run, after earlier stages changed things. It
// reads nothing of pf but the CRDs and returns its problems, so it runs
// beside the access reviews.
func (pf *preflight) compareStoredVersions(ctx context.Context) (errs field.ErrorList) {
	for _, w := range pf.crdWrites {
		name := w.next.GetName()
		live, err := pf.liveCRD(ctx, name)
		switch {
		case apierrors.IsNotFound(err):
			continue // a new CRD stores nothing yet
		case apierrors.IsForbidden(err):
			continue // the access review reports the get the step needs
		case err != nil:
			errs = append(errs, field.InternalError(w.path, fmt.Errorf("get CustomResourceDefinition %s to compare its stored versions: %w", name, err)))
			continue
		}
		drops := apiremovals.DroppedStoredVersions(live, w.next)
		if len(drops) == 0 {
			continue
		}
		n, countErr := pf.countObjects(ctx, live)
		for _, d := range drops {
			d.Objects, d.CountErr = n, countErr
			errs = append(errs, field.Invalid(w.path, name, d.String()))
		}
	}
	return errs
}

// countObjects counts a live CRD's objects in every namespace, read in a
// version it serves: what a storage migration must rewrite. -1 and why
// when they cannot be counted.
func (pf *preflight) countObjects(ctx context.Context, live *unstructured.Unstructured) (int, error) {
	version := apiremovals.ServedVersion(live)
	if version == "" {
		return -1, fmt.Errorf("the CRD serves no version to list them in")
	}
	group, _, _ := unstructured.NestedString(live.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(live.Object, "spec", "names", "plural")
	ri := pf.d.Clients.Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: plural})
	n := 0
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := ri.List(ctx, opts)
		if err != nil {
			return -1, fmt.Errorf("list %s.%s: %w", plural, group, err)
		}
		n += len(list.Items)
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return n, nil
		}
	}
}

// removedAPI is what the table of Kubernetes removals says of a kind the
// cluster does not serve, worded for the cluster's version; false when
// the table does not know it as removed there.
func (pf *preflight) removedAPI(gvk schema.GroupVersionKind) (string, bool) {
	minor, known := pf.kubernetesMinor()
	upTo := minor
	if !known {
		upTo = math.MaxInt // the kind is not served: the table is the likely why
	}
	rs := apiremovals.Removed([]schema.GroupVersionKind{gvk}, 0, upTo)
	if len(rs) == 0 {
		return "", false
	}
	if !known {
		return "the cluster does not serve it: " + rs[0].String(), true
	}
	return fmt.Sprintf("the cluster runs Kubernetes 1.%d and does not serve it: %s", minor, rs[0].String()), true
}

// kubernetesMinor is the cluster's Kubernetes minor, asked once.
func (pf *preflight) kubernetesMinor() (int, bool) {
	if !pf.minorAsked {
		pf.minorAsked = true
		if info, err := pf.d.Clients.Clientset.Discovery().ServerVersion(); err == nil {
			if v, err := versions.Kubernetes(info.GitVersion); err == nil {
				pf.minor, pf.minorKnown = int(v.Minor()), true
			}
		}
	}
	return pf.minor, pf.minorKnown
}

// noKindMatch is how the API machinery words a kind it cannot map, as
// Helm quotes it when a chart renders one.
var noKindMatch = regexp.MustCompile(`no matches for kind "([^"]+)" in version "([^"]+)"`)

// removedInMessage adds what the table of removals says of the kinds an
// error message cannot map (a chart that renders a removed apiVersion
// fails Helm's dry run before preflight sees its objects).
func (pf *preflight) removedInMessage(msg string) string {
	seen := map[string]bool{}
	for _, m := range noKindMatch.FindAllStringSubmatch(msg, -1) {
		if seen[m[0]] {
			continue
		}
		seen[m[0]] = true
		if why, ok := pf.removedAPI(schema.FromAPIVersionAndKind(m[2], m[1])); ok {
			msg += "; " + why
		}
	}
	return msg
}
