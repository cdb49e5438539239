package autopilot

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// KubeletVersion is what a node's kubelet reports once it runs k0s
// version v: the version up to "+k0s" (v1.34.1+k0s.0 → v1.34.1+k0s), as
// embedded-cluster compares them. A version without "+k0s" is compared
// as it is.
func KubeletVersion(v string) string {
	if i := strings.Index(v, "+k0s"); i >= 0 {
		return v[:i+len("+k0s")]
	}
	return v
}

// cluster is the nodes as the step reads them.
type cluster struct {
	roles roles
	// behind are the nodes whose kubelet does not report the version, with
	// what each reports; ahead, those that do.
	behind map[string]string
	ahead  []string
}

func (c cluster) behindText() string {
	names := make([]string, 0, len(c.behind))
	for n := range c.behind {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s at %s", n, c.behind[n])
	}
	return strings.Join(parts, ", ")
}

// readNodes lists the nodes: their roles, and which run version (a k0s
// version).
func readNodes(ctx context.Context, cs kubernetes.Interface, version string) (cluster, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return cluster{}, fmt.Errorf("list nodes: %w", err)
	}
	want := KubeletVersion(version)
	c := cluster{behind: map[string]string{}}
	items := list.Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	for i := range items {
		n := &items[i]
		if controller(n) {
			c.roles.controllers = append(c.roles.controllers, n.Name)
		} else {
			c.roles.workers = append(c.roles.workers, n.Name)
		}
		if got := n.Status.NodeInfo.KubeletVersion; got != want {
			c.behind[n.Name] = got
		} else {
			c.ahead = append(c.ahead, n.Name)
		}
	}
	return c, nil
}

func controller(n *corev1.Node) bool {
	_, ok := n.Labels[ControlPlaneLabel]
	return ok
}

// Reads are the nodes the step reads (step.Reader).
func (e *Executor) Reads() []schema.GroupVersionResource {
	return []schema.GroupVersionResource{{Version: "v1", Resource: "nodes"}}
}

// untargeted are the nodes not on the version that plan does not name:
// they joined after it was written (its targets are static node lists).
func untargeted(plan *unstructured.Unstructured, c cluster) []string {
	named := map[string]bool{}
	cmds, _, _ := unstructured.NestedSlice(plan.Object, "spec", "commands")
	for _, cmd := range cmds {
		cm, _ := cmd.(map[string]any)
		for _, path := range [][]string{{"k0supdate", "targets", "controllers"}, {"k0supdate", "targets", "workers"}, {"airgapupdate", "workers"}} {
			nodes, _, _ := unstructured.NestedStringSlice(cm, append(path, "discovery", "static", "nodes")...)
			for _, n := range nodes {
				named[n] = true
			}
		}
	}
	var out []string
	for n := range c.behind {
		if !named[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
