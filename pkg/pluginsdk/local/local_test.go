package local

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// pools labels the package cluster's nodes: node-0 and node-1 in pool
// "blue", node-2 in pool "green".
func pools(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	for i, pool := range []string{"blue", "blue", "green"} {
		patch := []byte(`{"metadata":{"labels":{"` + LabelNodePool + `":"` + pool + `"}}}`)
		if _, err := cs.CoreV1().Nodes().Patch(ctx, localcluster.NodeName(i), "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// web deploys replicas pods spread over the nodes, and a
// PodDisruptionBudget that keeps minAvailable of them.
func web(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, replicas, minAvailable int32) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "web", Image: "web:1"}},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
						WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	min := intstr.FromInt32(minAvailable)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		got, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
		if err == nil && got.Status.CurrentHealthy >= replicas && got.Status.ObservedGeneration == got.Generation {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("web: %d pods healthy after a minute, want %d", got.Status.CurrentHealthy, replicas)
		}
	}
}

// ready counts the web pods Running and Ready.
func readyPods(ctx context.Context, cs kubernetes.Interface, ns string) int {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				n++
			}
		}
	}
	return n
}

func waitOp(t *testing.T, ctx context.Context, p *Plugin, id string, op pluginsdk.Operation) pluginsdk.OperationReport {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := p.WaitOperation(wctx, id, op)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The plugin over a real local cluster: service out and in flip the
// router's label; the control plane's version is recorded; a node pool
// upgrade replaces each node by one whose kubelet reports the new
// version, draining through the eviction API so the PodDisruptionBudget
// holds (sampled throughout); a pool newer than the control plane is
// refused.
func TestLocalPluginUpgradesAClusterAndKeepsThePDB(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	pools(t, ctx, cs)
	ns := testenv.Namespace(t, ctx, cs, "local")
	web(t, ctx, cs, ns, 3, 2)
	p, err := New(Config{Clusters: map[string]*rest.Config{"one": c.RESTConfig()}, MasterLatency: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}

	v, err := p.GetVersion(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.Master, "v1.") || len(v.NodePools) != 2 || v.NodePools[0].ID != "blue" || v.NodePools[1].ID != "green" {
		t.Fatalf("versions %+v: want the API server's version and pools blue, green", v)
	}

	op, err := p.ServiceOut(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	if r := waitOp(t, ctx, p, "one", op); r.Status != pluginsdk.OperationDone {
		t.Fatalf("service out: %+v", r)
	}
	if s, _ := p.GetClusterStatus(ctx, "one"); s.Service != pluginsdk.ServiceOut || !s.Available {
		t.Fatalf("after service out: %+v", s)
	}

	if _, err := p.UpgradeNodePool(ctx, "one", "blue", "v9.0.0"); err == nil || !strings.Contains(err.Error(), "newer than the control plane") {
		t.Fatalf("a pool newer than the control plane: %v", err)
	}
	op, _ = p.UpgradeMaster(ctx, "one", "v9.0.0")
	if r := waitOp(t, ctx, p, "one", op); r.Status != pluginsdk.OperationDone {
		t.Fatalf("upgrade master: %+v", r)
	}

	var mu sync.Mutex
	fewest := 3
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if n := readyPods(ctx, cs, ns); n >= 0 {
				mu.Lock()
				fewest = min(fewest, n)
				mu.Unlock()
			}
		}
	}()
	op, err = p.UpgradeNodePool(ctx, "one", "blue", "v9.0.0")
	if err != nil {
		t.Fatal(err)
	}
	r := waitOp(t, ctx, p, "one", op)
	close(stop)
	<-sampled
	if r.Status != pluginsdk.OperationDone || r.Done != 2 || r.Total != 2 {
		t.Fatalf("upgrade node pool blue: %+v", r)
	}
	if fewest < 2 {
		t.Errorf("%d web pods were Ready at one point during the drains; the PodDisruptionBudget keeps 2", fewest)
	}
	for _, name := range []string{"node-0", "node-1"} {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil || n.Status.NodeInfo.KubeletVersion != "v9.0.0" || n.Spec.Unschedulable {
			t.Errorf("node %s after the upgrade: %v, kubelet %q, unschedulable %t", name, err, n.Status.NodeInfo.KubeletVersion, n.Spec.Unschedulable)
		}
	}
	v, _ = p.GetVersion(ctx, "one")
	if v.Master != "v9.0.0" || v.NodePools[0].Version != "v9.0.0" || v.NodePools[1].Version == "v9.0.0" {
		t.Errorf("versions after: %+v; want master and blue at v9.0.0, green as it was", v)
	}

	op, _ = p.ServiceIn(ctx, "one")
	waitOp(t, ctx, p, "one", op)
	if s, _ := p.GetClusterStatus(ctx, "one"); s.Service != pluginsdk.ServiceIn {
		t.Errorf("after service in: %+v", s)
	}
}

// A drain the PodDisruptionBudget forbids fails the operation after
// DrainTimeout, and the plugin's message says why.
func TestLocalPluginDrainBlockedByAPDBFails(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	pools(t, ctx, cs)
	ns := testenv.Namespace(t, ctx, cs, "local-pdb")
	one := int32(1)
	labels := map[string]string{"app": "pinned"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pinned", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"kubernetes.io/hostname": "node-2"},
				Containers:   []corev1.Container{{Name: "db", Image: "db:1"}}}}},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	all := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pinned", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &all, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		got, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "pinned", metav1.GetOptions{})
		if err == nil && got.Status.CurrentHealthy == 1 && got.Status.ObservedGeneration == got.Generation {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pinned pod is not healthy after a minute")
		}
	}
	p, err := New(Config{Clusters: map[string]*rest.Config{"one": c.RESTConfig()}, DrainTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := p.GetVersion(ctx, "one")
	op, err := p.UpgradeNodePool(ctx, "one", "green", v.Master)
	if err != nil {
		t.Fatal(err)
	}
	r := waitOp(t, ctx, p, "one", op)
	if r.Status != pluginsdk.OperationFailed || !strings.Contains(r.Message, "drain of node node-2 did not finish within 3s") || !strings.Contains(r.Message, "disruption budget") {
		t.Fatalf("a drain the PDB forbids: %+v; want failed, naming the node and the budget", r)
	}
	if !strings.Contains(r.Message, "(budget pinned: 1 of 1 pods healthy, 1 needed, 0 disruptions allowed)") {
		t.Errorf("message %q: want what the budget counts", r.Message)
	}
	pods, _ := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=pinned"})
	if len(pods.Items) != 1 || pods.Items[0].DeletionTimestamp != nil {
		t.Errorf("the pinned pod was evicted against its budget: %d pods", len(pods.Items))
	}
	if n, err := cs.CoreV1().Nodes().Get(ctx, "node-2", metav1.GetOptions{}); err != nil || n.Spec.Unschedulable {
		t.Errorf("node-2 is left cordoned after the failed drain (%v)", err)
	}
}
