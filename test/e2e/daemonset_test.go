package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// waitNodesSchedulable waits until the cluster's 3 nodes are Ready and
// carry no taint: a node the node test made NotReady may keep its
// not-ready taint for a few seconds after it recovers.
func (e *env) waitNodesSchedulable(t *testing.T) {
	t.Helper()
	eventually(t, e.ctx, 30*time.Second, "3 schedulable Ready nodes", func() (bool, string, error) {
		nodes, err := e.cs.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		ok := 0
		var why []string
		for _, n := range nodes.Items {
			switch {
			case !localcluster.NodeIsReady(&n):
				why = append(why, n.Name+" not Ready")
			case len(n.Spec.Taints) > 0:
				why = append(why, fmt.Sprintf("%s tainted %v", n.Name, n.Spec.Taints))
			default:
				ok++
			}
		}
		return ok == 3 && len(nodes.Items) == 3, fmt.Sprintf("%d nodes, %d schedulable: %v", len(nodes.Items), ok, why), nil
	})
}

// TestDaemonSetReadyOnAllNodes: a DaemonSet is Current with one Ready pod
// on each of the 3 nodes. Not parallel: it counts nodes, which the node
// test takes away for a while.
func TestDaemonSetReadyOnAllNodes(t *testing.T) {
	e := newEnv(t, true)
	e.waitNodesSchedulable(t)
	const image = "example.com/agent:2.0"
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, image),
		},
	}
	if _, err := e.cs.AppsV1().DaemonSets(e.ns).Create(e.ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create daemonset: %v", err)
	}
	start := time.Now()
	h, err := e.w.WaitCurrent(e.ctx, kube.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: e.ns, Name: "agent"}, waitTimeout)
	if err != nil {
		t.Fatalf("wait daemonset: %v", err)
	}
	t.Logf("daemonset Current after %s: %s", time.Since(start).Round(time.Millisecond), h)
	got, err := e.cs.AppsV1().DaemonSets(e.ns).Get(e.ctx, "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.DesiredNumberScheduled != 3 || got.Status.NumberReady != 3 {
		t.Errorf("daemonset desired %d, ready %d; want 3 and 3", got.Status.DesiredNumberScheduled, got.Status.NumberReady)
	}
	pods := e.livePods(t, "app=agent")
	checkPodsRunImage(t, pods, 3, image)
	var nodes []string
	for _, p := range pods {
		nodes = append(nodes, p.Spec.NodeName)
	}
	sort.Strings(nodes)
	if want := []string{"node-0", "node-1", "node-2"}; fmt.Sprint(nodes) != fmt.Sprint(want) {
		t.Errorf("pods run on %v, want one on each of %v", nodes, want)
	}
}
