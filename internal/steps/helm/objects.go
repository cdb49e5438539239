package helm

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/step"
)

// objectsOf decodes a release manifest and gives namespaced objects
// without a namespace the release's, as Helm does when it applies them.
// A kind the cluster does not serve yet (a CRD the chart installs) is
// taken as namespaced: most custom resources are.
func objectsOf(manifest, namespace string, mapper meta.RESTMapper) ([]*unstructured.Unstructured, error) {
	objs, err := source.Decode([]byte(manifest))
	if err != nil {
		return nil, fmt.Errorf("decode release manifest: %w", err)
	}
	for _, o := range objs {
		if o.GetNamespace() != "" {
			continue
		}
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil && m.Scope.Name() == meta.RESTScopeNameRoot {
			continue
		}
		o.SetNamespace(namespace)
	}
	return objs, nil
}

// refsOf are the objects' refs, sorted and without duplicates.
func refsOf(sets ...[]*unstructured.Unstructured) []step.Ref {
	seen := map[step.Ref]bool{}
	var out []step.Ref
	for _, objs := range sets {
		for _, o := range objs {
			r := kube.RefOf(o)
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
