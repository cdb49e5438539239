package local

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// UpgradeNodePool replaces the pool's nodes not at version, one by one.
// A pool newer than the control plane is refused: no kubelet may be newer
// than its API server.
func (p *Plugin) UpgradeNodePool(ctx context.Context, id, pool, version string) (pluginsdk.Operation, error) {
	cs, err := p.client(id)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	cm, err := state(ctx, cs)
	if err != nil {
		return pluginsdk.Operation{}, status.Error(codes.Unavailable, fmt.Sprintf("cluster %s: %v", id, err))
	}
	if master := cm.Data[keyMasterVersion]; older(master, version) {
		return pluginsdk.Operation{}, status.Error(codes.FailedPrecondition,
			fmt.Sprintf("node pool %s would run %s, newer than the control plane's %s: upgrade the control plane first", pool, version, master))
	}
	pools, err := nodePools(ctx, cs)
	if err != nil {
		return pluginsdk.Operation{}, status.Error(codes.Unavailable, fmt.Sprintf("cluster %s: %v", id, err))
	}
	if _, ok := pools[pool]; !ok {
		return pluginsdk.Operation{}, status.Error(codes.NotFound, fmt.Sprintf("cluster %s has no node pool %q (nodes labelled %s)", id, pool, LabelNodePool))
	}
	return p.ops.start(id, "UpgradeNodePool", func(set func(int32, int32, string)) error {
		return p.replacePool(cs, pool, version, set)
	}), nil
}

// replacePool replaces each node of the pool not at version.
func (p *Plugin) replacePool(cs kubernetes.Interface, pool, version string, set func(int32, int32, string)) error {
	ctx := context.Background()
	pools, err := nodePools(ctx, cs)
	if err != nil {
		return err
	}
	nodes := pools[pool]
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	total := int32(len(nodes))
	for i, n := range nodes {
		set(int32(i), total, fmt.Sprintf("node %s", n.Name))
		if n.Status.NodeInfo.KubeletVersion == version {
			continue
		}
		if err := p.drain(ctx, cs, n.Name); err != nil {
			// Leave the node as it was: schedulable, its pods where the
			// budget kept them.
			uncordon := []byte(`{"spec":{"unschedulable":false}}`)
			if _, uerr := cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, uncordon, metav1.PatchOptions{}); uerr != nil {
				return fmt.Errorf("%w (and uncordon it again: %v)", err, uerr)
			}
			return err
		}
		if err := p.replace(ctx, cs, &n, version); err != nil {
			return err
		}
	}
	set(total, total, "every node replaced")
	return nil
}

// drain cordons the node and evicts its pods through the eviction API,
// retrying while a PodDisruptionBudget refuses, until the node holds no
// pod that may be evicted (DaemonSet pods stay, as kubectl drain leaves
// them).
//
// DrainTimeout bounds the time without progress, not the whole drain: each
// eviction a budget allows waits on a replacement pod getting Ready, which
// on a loaded cluster takes as long as it takes. A drain fails when no pod
// has left the node for DrainTimeout, which is when a budget (or a pod
// that never goes) really holds it.
func (p *Plugin) drain(ctx context.Context, cs kubernetes.Interface, node string) error {
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("cordon node %s: %w", node, err)
	}
	var refused error
	var refusedPod *corev1.Pod
	fewest := -1
	deadline := time.Now().Add(p.cfg.DrainTimeout)
	tick := time.NewTicker(p.cfg.Poll)
	defer tick.Stop()
	for {
		left, err := p.evictPods(ctx, cs, node, &refused, &refusedPod)
		switch {
		case err != nil:
			return fmt.Errorf("drain node %s: %w", node, err)
		case left == 0:
			return nil
		case fewest < 0 || left < fewest:
			fewest, deadline = left, time.Now().Add(p.cfg.DrainTimeout)
		case time.Now().After(deadline):
			if refused != nil {
				return fmt.Errorf("drain of node %s did not finish within %s: %w%s", node, p.cfg.DrainTimeout, refused, why(ctx, cs, refusedPod))
			}
			return fmt.Errorf("drain of node %s did not finish within %s", node, p.cfg.DrainTimeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drain node %s: %w", node, ctx.Err())
		case <-tick.C:
		}
	}
}

// evictPods asks once to evict every pod the node holds that may go, and
// answers how many are left on it (those going included). A refusal by a
// budget is kept in refused; the drain retries it.
func (p *Plugin) evictPods(ctx context.Context, cs kubernetes.Interface, node string, refused *error, refusedPod **corev1.Pod) (int, error) {
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		// A list that fails is retried at the next tick; the node's
		// pods are still there as far as the drain knows.
		return math.MaxInt, nil
	}
	left := 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if daemonPod(pod) {
			continue
		}
		left++
		if pod.DeletionTimestamp != nil {
			continue
		}
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
		err := cs.PolicyV1().Evictions(pod.Namespace).Evict(ctx, ev)
		switch {
		case err == nil, apierrors.IsNotFound(err):
		case apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			// Its namespace is going away, and the pod with it (as
			// kubectl drain waits for it).
		case apierrors.IsTooManyRequests(err):
			*refused = fmt.Errorf("evict pod %s/%s: %w", pod.Namespace, pod.Name, err)
			*refusedPod = pod
		default:
			return 0, fmt.Errorf("evict pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	return left, nil
}

func daemonPod(pod *corev1.Pod) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

// replace moves the drained node to the new kubelet version in place, as
// a kubelet restarted on a new version would: its version label (what the
// local cluster's fake kubelet reports) and the status's kubelet version
// are set, it is uncordoned, and it must be Ready on that version. It once
// deleted the node and registered it again, as a cloud replaces a VM; the
// fake kubelet could then leave a pod bound to the node registered again
// Pending for good, and that pod held the next drain's budget.
func (p *Plugin) replace(ctx context.Context, cs kubernetes.Interface, old *corev1.Node, version string) error {
	label, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{LabelKubeletVersion: version}}})
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Nodes().Patch(ctx, old.Name, types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label node %s with kubelet %s: %w", old.Name, version, err)
	}
	status, err := json.Marshal(map[string]any{"status": map[string]any{"nodeInfo": map[string]string{"kubeletVersion": version}}})
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Nodes().PatchStatus(ctx, old.Name, status); err != nil {
		return fmt.Errorf("set node %s's kubelet to %s: %w", old.Name, version, err)
	}
	uncordon := []byte(`{"spec":{"unschedulable":false}}`)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, old.Name, types.MergePatchType, uncordon, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("uncordon node %s: %w", old.Name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, p.cfg.Poll, p.cfg.NodeReadyTimeout, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, old.Name, metav1.GetOptions{})
		return err == nil && ready(n) && n.Status.NodeInfo.KubeletVersion == version && !n.Spec.Unschedulable, nil
	})
	if err != nil {
		return fmt.Errorf("node %s is not Ready with kubelet %s within %s", old.Name, version, p.cfg.NodeReadyTimeout)
	}
	return nil
}
