package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// readyCondition returns the node's Ready condition as a client reads it.
func readyCondition(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) corev1.NodeCondition {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node %s: %v", name, err)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	t.Fatalf("node %s has no Ready condition: %+v", name, n.Status.Conditions)
	return corev1.NodeCondition{}
}

// TestNodeNotReadyAndRecovers: a node made NotReady is seen NotReady by a
// client (the others stay Ready), and Ready again once restored. Not
// parallel: other tests count Ready nodes. It needs no namespace.
func TestNodeNotReadyAndRecovers(t *testing.T) {
	e := newEnv(t, false)
	const node = "node-2"
	// Restore the node whatever happens, and wait until the node lifecycle
	// controller has lifted its not-ready taint, so later tests schedule
	// on all three nodes.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		if err := e.c.SetNodeReady(ctx, node, true); err != nil {
			t.Errorf("restore %s: %v", node, err)
			return
		}
		eventually(t, ctx, 40*time.Second, node+" untainted", func() (bool, string, error) {
			n, err := e.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			return len(n.Spec.Taints) == 0, fmt.Sprintf("taints %v", n.Spec.Taints), nil
		})
	})

	if c := readyCondition(t, e.ctx, e.cs, node); c.Status != corev1.ConditionTrue {
		t.Fatalf("%s Ready=%s before the test (%s), want True", node, c.Status, c.Message)
	}
	start := time.Now()
	if err := e.c.SetNodeReady(e.ctx, node, false); err != nil {
		t.Fatalf("make %s NotReady: %v", node, err)
	}
	t.Logf("%s NotReady after %s", node, time.Since(start).Round(time.Millisecond))
	// A separate client, as a user would have.
	cs, err := kubernetes.NewForConfig(e.c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := readyCondition(t, e.ctx, cs, node)
	if c.Status != corev1.ConditionFalse {
		t.Fatalf("%s Ready=%s (%s: %s), want False", node, c.Status, c.Reason, c.Message)
	}
	t.Logf("%s Ready condition: %s %s: %s", node, c.Status, c.Reason, c.Message)
	// It stays NotReady (nothing flips it back on its own) and the others
	// are unaffected.
	time.Sleep(1500 * time.Millisecond)
	if c := readyCondition(t, e.ctx, cs, node); c.Status != corev1.ConditionFalse {
		t.Errorf("%s Ready=%s 1.5s later, want still False", node, c.Status)
	}
	for _, other := range []string{"node-0", "node-1"} {
		if c := readyCondition(t, e.ctx, cs, other); c.Status != corev1.ConditionTrue {
			t.Errorf("%s Ready=%s, want True", other, c.Status)
		}
	}

	start = time.Now()
	if err := e.c.SetNodeReady(e.ctx, node, true); err != nil {
		t.Fatalf("make %s Ready again: %v", node, err)
	}
	t.Logf("%s Ready again after %s", node, time.Since(start).Round(time.Millisecond))
	if c := readyCondition(t, e.ctx, cs, node); c.Status != corev1.ConditionTrue {
		t.Errorf("%s Ready=%s (%s) after recovery, want True", node, c.Status, c.Message)
	}
}
