package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const (
	// kwokNodeAnnotation marks nodes kwok manages.
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	// NotReadyLabel, set to "true" on a node, makes kwok report it NotReady;
	// removing the label makes it Ready again.
	NotReadyLabel = "upshift.dev/not-ready"
	// KubeletVersionLabel on a node is the kubelet version kwok reports for
	// it once it registers.
	KubeletVersionLabel = "upshift.dev/kubelet-version"
)

// NodeName returns the name of the i-th fake node (from 0).
func NodeName(i int) string { return fmt.Sprintf("node-%d", i) }

// createNodes registers n untainted fake nodes for kwok to run, reporting
// kubelet (empty: kwok's version).
func createNodes(ctx context.Context, cs kubernetes.Interface, n int, kubelet string) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
	}
	for i := 0; i < n; i++ {
		name := NodeName(i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{kwokNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
				Labels: map[string]string{
					"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
					"node-role.kubernetes.io/worker": "", "type": "kwok",
				},
			},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		if kubelet != "" {
			node.Labels[KubeletVersionLabel] = kubelet
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", name, err)
		}
	}
	return nil
}

// nodesReady passes when n nodes report Ready.
func nodesReady(ctx context.Context, cs kubernetes.Interface, n int) error {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ready := 0
	for _, node := range list.Items {
		if NodeIsReady(&node) {
			ready++
		}
	}
	if ready < n {
		return fmt.Errorf("%d of %d nodes Ready", ready, n)
	}
	return nil
}

// NodeIsReady reports whether the node's Ready condition is True.
func NodeIsReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// SetNodeReady makes kwok report the node NotReady (ready=false) or Ready
// again, and waits until the node's condition says so.
func (c *Cluster) SetNodeReady(ctx context.Context, name string, ready bool) error {
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	var value any = "true"
	if ready {
		value = nil // a JSON merge patch removes the label
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{NotReadyLabel: value}}})
	if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label node %s: %w", name, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil && NodeIsReady(node) == ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("node %s did not become ready=%t within 30s", name, ready)
}

// AddNodes registers fake nodes until node-0 … node-(n-1) exist: nodes
// joining the cluster, for kwok to run.
func AddNodes(ctx context.Context, cs kubernetes.Interface, n int) error {
	return createNodes(ctx, cs, n, "")
}
