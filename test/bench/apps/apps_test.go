//go:build bench

// Package apps measures the AppRollout controller at scale: many
// rollouts (10,000 by default, in 100 namespaces, each acting as its
// namespace's ServiceAccount) reconciled by one controller (the real
// binary) on a local control plane. It reports the controller's peak
// RSS, how soon it reacts to a changed rollout while 100 of them
// progress (the time from the spec change to status.observedGeneration,
// p50 and p99), the API requests per second it makes while every
// rollout is idle, and whether any rollout's phase moved but by its own
// steps. Run it with `make bench-apps`; the figures go in
// docs/benchmarks.md.
package apps

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/controller"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

var (
	rollouts   = flag.Int("rollouts", 10000, "AppRollouts in all")
	namespaces = flag.Int("namespaces", 100, "namespaces they are spread over")
	moving     = flag.Int("progress", 100, "rollouts moved to a new version while the rest idle")
	idleFor    = flag.Duration("idle", 30*time.Second, "how long the idle controller's requests are counted")
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestAppsAtScale(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = 500, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	kc, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	testenv.InstallCRDs(t, cfg)
	runs := testenv.Namespace(t, ctx, cs, "apps-bench-ctl")

	start := time.Now()
	names := create(t, ctx, cs, kc)
	t.Logf("created %d Deployments and AppRollouts in %d namespaces in %s", len(names), *namespaces, time.Since(start).Round(time.Second))

	const user = "apps-bench-controller"
	metricsAddr := testenv.FreeAddr(t)
	ctl := startController(t, c, user, runs, metricsAddr)
	defer ctl.stop()
	token := metricsToken(t, ctx, cs, runs)

	start = time.Now()
	w := watchPhases(t, ctx, kc)
	w.waitAll(t, ctx, len(names), func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppHealthy })
	t.Logf("all %d adopted Healthy in %s", len(names), time.Since(start).Round(time.Second))

	// Idle: what the controller asks of the API server when nothing moves.
	time.Sleep(5 * time.Second)
	w.reset()
	from := time.Now()
	time.Sleep(*idleFor)
	requests := countRequests(t, c, user, from, time.Now())
	t.Logf("idle: %d requests in %s: %.2f/s; phase changes: %d", requests, *idleFor, float64(requests)/idleFor.Seconds(), w.changes())

	// Progress: some move to v2 while the rest idle; how soon the
	// controller reacts to each, and nothing else moves.
	w.reset()
	reconciles := scrape(t, metricsAddr, token, "controller_runtime_reconcile_time_seconds", "controller", "approllout")
	queued := scrape(t, metricsAddr, token, "workqueue_queue_duration_seconds", "name", "approllout")
	lat := progress(t, ctx, kc, w, names[:*moving])
	slices.Sort(lat)
	t.Logf("progress: %d rollouts to v2; reaction p50 %s, p99 %s, max %s", len(lat), pct(lat, 50), pct(lat, 99), lat[len(lat)-1])
	after := scrape(t, metricsAddr, token, "controller_runtime_reconcile_time_seconds", "controller", "approllout")
	p50, n := quantile(reconciles, after, 0.5)
	p99, _ := quantile(reconciles, after, 0.99)
	t.Logf("progress: %d reconciles; reconcile latency p50 ≤ %gs, p99 ≤ %gs (the controller's histogram buckets)", n, p50, p99)
	afterQ := scrape(t, metricsAddr, token, "workqueue_queue_duration_seconds", "name", "approllout")
	q50, qn := quantile(queued, afterQ, 0.5)
	q99, _ := quantile(queued, afterQ, 0.99)
	t.Logf("progress: %d waits in the queue; p50 ≤ %gs, p99 ≤ %gs", qn, q50, q99)
	if others := w.changedOutside(names[:*moving]); len(others) > 0 {
		t.Errorf("flapping: %d rollouts that did not move changed phase: %v", len(others), others[:min(5, len(others))])
	}
	t.Logf("controller peak RSS %.1f MB", float64(ctl.peak())/1024)
}

func pct(d []time.Duration, p int) time.Duration { return d[(len(d)-1)*p/100].Round(time.Millisecond) }

// create makes the namespaces, each with a ServiceAccount allowed what a
// rollout does, and in them a Deployment (no replicas: the bench is the
// controller's, not kwok's) and its AppRollout at the version it runs.
func create(t *testing.T, ctx context.Context, cs kubernetes.Interface, kc client.Client) []types.NamespacedName {
	per := *rollouts / *namespaces
	var mu sync.Mutex
	var names []types.NamespacedName
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for n := range *namespaces {
		g.Go(func() error {
			ns := fmt.Sprintf("apps-bench-%03d", n)
			if err := tenant(gctx, cs, ns); err != nil {
				return err
			}
			for i := range per {
				name := fmt.Sprintf("app-%04d", i)
				if err := rollout(gctx, cs, kc, ns, name); err != nil {
					return err
				}
				mu.Lock()
				names = append(names, types.NamespacedName{Namespace: ns, Name: name})
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return names
}

func tenant(ctx context.Context, cs kubernetes.Interface, ns string) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: all},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: all},
	}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}}}
	_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
	return err
}

func rollout(ctx context.Context, cs kubernetes.Interface, kc client.Client, ns, name string) error {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/" + name + ":v1"}}}}}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return err
	}
	return kc.Create(ctx, &v1alpha1.AppRollout{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.AppRolloutSpec{Version: "v1", ServiceAccountName: "deployer",
			UpgradeStrategy: v1alpha1.AppUpgradeStrategy{Type: v1alpha1.StrategyRolling}}})
}

// progress moves the rollouts to v2 and returns, for each, how long the
// controller took to act on the change (status.observedGeneration
// reaching the new generation), once all are Healthy at v2.
func progress(t *testing.T, ctx context.Context, kc client.Client, w *phases, names []types.NamespacedName) []time.Duration {
	changed := make(map[types.NamespacedName]time.Time, len(names))
	for _, n := range names {
		a := &v1alpha1.AppRollout{}
		a.Namespace, a.Name = n.Namespace, n.Name
		changed[n] = time.Now()
		if err := kc.Patch(ctx, a, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"version":"v2"}}`))); err != nil {
			t.Fatal(err)
		}
	}
	w.waitAll(t, ctx, len(names), func(a *v1alpha1.AppRollout) bool {
		_, moved := changed[client.ObjectKeyFromObject(a)]
		return moved && a.Status.Phase == v1alpha1.AppHealthy && a.Status.CurrentVersion == "v2"
	})
	var out []time.Duration
	for n, at := range changed {
		seen, ok := w.reacted(n)
		if !ok {
			t.Fatalf("%s: no reaction seen", n)
		}
		out = append(out, seen.Sub(at))
	}
	return out
}

// countRequests counts the requests the controller's user made (itself
// or impersonating a rollout's ServiceAccount) between from and to.
func countRequests(t *testing.T, c *localcluster.Cluster, user string, from, to time.Time) int {
	events, err := c.ReadAudit()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range localcluster.ByUser(events, user) {
		if !e.RequestReceivedTimestamp.Before(from) && e.RequestReceivedTimestamp.Before(to) {
			n++
		}
	}
	return n
}

// controllerProc is the controller under test.
type controllerProc struct {
	cmd  *exec.Cmd
	logs *testenv.SyncBuffer
	mu   sync.Mutex
	hwm  int
	done chan struct{}
}

func startController(t *testing.T, c *localcluster.Cluster, user, runs, metricsAddr string) *controllerProc {
	kc, err := c.UserKubeconfig(user, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	p := &controllerProc{logs: &testenv.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(testenv.UpshiftBinary(t), "controller", "--kubeconfig", kc, "--namespace", runs,
		"--metrics-addr", metricsAddr, "--health-probe-addr", "0", "--app-poll", "500ms")
	p.cmd.Env = append(os.Environ(), "KUBECONFIG=")
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-tick.C:
				if kb := testenv.PeakRSS(p.cmd.Process.Pid); kb > 0 {
					p.mu.Lock()
					p.hwm = max(p.hwm, kb)
					p.mu.Unlock()
				}
			}
		}
	}()
	return p
}

func (p *controllerProc) peak() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.hwm, testenv.PeakRSS(p.cmd.Process.Pid))
}

func (p *controllerProc) stop() {
	close(p.done)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}
