//go:build bench

// Package fleet measures a fleet rollout at scale: 400 simulated
// clusters (the most a ClusterVersion holds) (the sim plugin, served over mutual TLS from this process) in
// two waves, rolled by the controller (the real binary) on a local
// control plane. It reports the wall time against the least the
// availability budget allows, the controller's peak RSS, and the plugin
// calls per cluster. Run it with `make bench-fleet`; the figures go in
// docs/benchmarks.md.
package fleet

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/plugintest"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

var (
	logs = &testenv.SyncBuffer{} // the controller's output

	clusters    = flag.Int("clusters", 400, "simulated clusters (at most 400, the CRD's MaxItems)")
	required    = flag.Int("required", 360, "requiredAvailableCount")
	canary      = flag.Int("canary", 10, "clusters of the first wave, all at once")
	concurrency = flag.Int("concurrency", 40, "maxConcurrency of the second wave")
	opLatency   = flag.Duration("op-latency", time.Second, "how long each operation runs; the control plane takes three of them")
	logTo       = flag.String("controller-log", "", "write the controller's debug log to this file")
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestFleetAtScale(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cfg := c.RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, ctx, cs, "fleet-bench")
	runs := testenv.Namespace(t, ctx, cs, "fleet-bench-runs")

	// Each cluster: service out, control plane (3 units), two node pools,
	// service in: 7 operation latencies.
	l := *opLatency
	s, err := sim.New(sim.Config{Count: *clusters, Version: "1.30.0", Latency: map[string]time.Duration{
		sim.OpServiceOut: l, sim.OpUpgradeMaster: 3 * l, sim.OpUpgradeNodePool: l, sim.OpServiceIn: l}})
	if err != nil {
		t.Fatal(err)
	}
	perCluster := 7 * l
	ca := plugintest.NewCA(t)
	server, client := ca.Issue(t, "127.0.0.1"), ca.Issue(t, "upshift-controller")
	tlsCfg, err := pluginsdk.ServerTLS(server.CertPEM, server.KeyPEM, ca.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = pluginsdk.Serve(sctx, lis, s, pluginsdk.WithTLS(tlsCfg)) }()

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ops-tls", Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"ca.crt": ca.CertPEM, corev1.TLSCertKey: client.CertPEM, corev1.TLSPrivateKeyKey: client.KeyPEM}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The namespace's default ServiceAccount (the fleet's) reads the
	// Secret, and nothing else.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "ops-tls", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"ops-tls"}, Verbs: []string{"get"}}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ops-tls", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "ops-tls"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: ns}}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	kc, err := c.UserKubeconfig("fleet-bench-controller", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.UpshiftBinary(t), "controller", "--kubeconfig", kc, "--namespace", runs, "--watch-namespaces", ns,
		"--metrics-addr", "0", "--health-probe-addr", "0")
	if *logTo != "" {
		cmd.Args = append(cmd.Args, "--debug")
		defer func() { _ = os.WriteFile(*logTo, []byte(logs.String()), 0o644) }()
	}
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGKILL); _ = cmd.Wait() }()

	cv := &v1alpha1.ClusterVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.ClusterVersionKind},
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: v1alpha1.ClusterVersionSpec{
			RequiredAvailableCount: int32(*required),
			OpsEndpoint:            v1alpha1.OpsEndpoint{Endpoint: lis.Addr().String(), TLSSecretRef: &v1alpha1.LocalObjectName{Name: "ops-tls"}},
			Waves: []v1alpha1.Wave{
				{Name: "canary", MaxConcurrency: int32(*canary)},
				{Name: "rest", Selector: &metav1.LabelSelector{}, MaxConcurrency: int32(*concurrency)},
			},
		},
	}
	for i, id := range s.IDs() {
		cv.Spec.Clusters = append(cv.Spec.Clusters, v1alpha1.FleetCluster{ID: id, Version: "1.31.0"})
		if i < *canary {
			cv.Spec.Waves[0].Clusters = append(cv.Spec.Waves[0].Clusters, id)
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cv)
	if err != nil {
		t.Fatal(err)
	}
	delete(m, "status")
	data, _ := json.Marshal(m)
	gvr := v1alpha1.GroupVersion.WithResource("clusterversions")
	start := time.Now()
	if _, err := dyn.Resource(gvr).Namespace(ns).Patch(ctx, "fleet", types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "bench"}); err != nil {
		t.Fatal(err)
	}
	peak := 0
	for {
		if kb := testenv.PeakRSS(cmd.Process.Pid); kb > peak {
			peak = kb
		}
		u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "fleet", metav1.GetOptions{})
		if err == nil {
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			if phase == string(v1alpha1.FleetSucceeded) {
				break
			}
			if phase == string(v1alpha1.FleetHalted) || phase == string(v1alpha1.FleetReverted) {
				t.Fatalf("the rollout stopped: %s\n%s", phase, logs.String())
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("no end within the bench's time; controller:\n%s", logs.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	wall := time.Since(start)
	if kb := testenv.PeakRSS(cmd.Process.Pid); kb > peak {
		peak = kb
	}

	// The least: each wave's clusters in batches of as many as its
	// concurrency and the budget allow, each batch a cluster's worth of
	// operations.
	slots := min(*concurrency, *clusters-*required)
	rest := *clusters - *canary
	least := time.Duration(ceilDiv(*canary, min(*canary, *clusters-*required))+ceilDiv(rest, slots)) * perCluster
	t.Logf("clusters %d, required %d, waves %d then %d at %d at once, %s per cluster",
		*clusters, *required, *canary, rest, slots, perCluster)
	t.Logf("wall %s, least %s: %.3f x the least", wall.Round(time.Millisecond), least, wall.Seconds()/least.Seconds())
	t.Logf("controller peak RSS %.1f MB", float64(peak)/1024)
	t.Logf("plugin calls %d: %.1f per cluster", s.TotalCalls(), float64(s.TotalCalls())/float64(*clusters))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
