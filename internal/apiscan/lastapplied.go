package apiscan

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	"github.com/upshift-dev/upshift/internal/apiremovals"
)

// LastAppliedAnnotation is where kubectl apply keeps the object as it
// was applied, apiVersion included.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// pageSize bounds each list: only metadata, but a cluster may hold many
// objects of a kind (Events, EndpointSlices).
const pageSize = 500

// lastAppliedKind is the apiVersion and kind an object's last-applied
// annotation records; false without one. An annotation that is not
// kubectl's JSON says nothing about the version (kubectl would not read
// it either), so it is passed over.
func lastAppliedKind(annotations map[string]string) (schema.GroupVersionKind, bool) {
	s, ok := annotations[LastAppliedAnnotation]
	if !ok {
		return schema.GroupVersionKind{}, false
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal([]byte(s), &tm); err != nil || tm.APIVersion == "" || tm.Kind == "" {
		return schema.GroupVersionKind{}, false
	}
	return schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind), true
}

// scanLastApplied lists t's objects (metadata only, every namespace, page
// by page) and reports those last applied in a version removed at or
// before minor. seen skips an object listed twice (a kind served in two
// groups, as Deployments were in extensions and apps).
func scanLastApplied(ctx context.Context, md metadata.Interface, t target, minor int, seen map[types.UID]bool) ([]Finding, error) {
	var out []Finding
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		list, err := md.Resource(t.GVR).Namespace(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", t.GVR.GroupResource(), err)
		}
		for _, o := range list.Items {
			gvk, ok := lastAppliedKind(o.Annotations)
			if !ok || seen[o.UID] {
				continue
			}
			for _, r := range apiremovals.Removed([]schema.GroupVersionKind{gvk}, 0, minor) {
				seen[o.UID] = true
				out = append(out, Finding{Kind: gvk.Kind, Namespace: o.Namespace, Name: o.Name, Removal: r})
			}
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// listFix is the access listing t needs, for a Problem.
func listFix(t target) string {
	where := ""
	if t.Namespaced {
		where = " in every namespace"
	}
	return fmt.Sprintf("grant list on %s%s (a ClusterRole bound by a ClusterRoleBinding) to whoever runs the upgrade", t.GVR.GroupResource(), where)
}
