package profiles_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

var (
	liqoExample    = filepath.Join(repo, "examples", "liqo")
	foreignCluster = schema.GroupVersionResource{Group: "core.liqo.io", Version: "v1beta1", Resource: "foreignclusters"}
	platformsGVR   = v1alpha1.GroupVersion.WithResource("platformupgrades")
)

// serveLiqo serves, on 127.0.0.1, Liqo's released CRD files at
// /<tag>/crds/<file> and Liqo's rendition for this cluster at
// /<tag>/liqo.yaml: what the catalog's crdsURL and manifestsURL point at
// in the test, so that nothing is downloaded. It returns both values.
func (e *env) serveLiqo() (crdsURL, manifestsURL string) {
	e.t.Helper()
	renditions := map[string][]byte{}
	for _, tag := range []string{"v1.0.0", "v1.1.0"} {
		renditions[tag] = stream(e.liqoRendition(tag))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch {
		case strings.Contains(r.URL.Path, ".."):
			http.NotFound(w, r)
		case len(parts) == 2 && parts[1] == "liqo.yaml" && renditions[parts[0]] != nil:
			_, _ = w.Write(renditions[parts[0]])
		case len(parts) == 3 && parts[1] == "crds":
			http.ServeFile(w, r, filepath.Join(liqoData, parts[0], "crds", parts[2]))
		default:
			http.NotFound(w, r)
		}
	}))
	e.t.Cleanup(srv.Close)
	return srv.URL + "/{tag}/crds", srv.URL + "/{tag}/liqo.yaml"
}

// installLiqo installs Liqo v1.0.0 as released: its CRD files, then its
// rendition created as Helm creates it (not applied: the upgrade must
// take over fields another manager set), the compatibility matrix, and
// stand-ins for two peerings' gateways; it waits until all are ready.
func (e *env) installLiqo() {
	e.t.Helper()
	e.kubectl("create", "namespace", "liqo")
	e.kubectl("apply", "--server-side", "-f", filepath.Join(liqoData, "v1.0.0", "crds"))
	e.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
	f := filepath.Join(e.t.TempDir(), "liqo-v1.0.0.yaml")
	if err := os.WriteFile(f, stream(e.liqoRendition("v1.0.0")), 0o600); err != nil {
		e.t.Fatal(err)
	}
	e.kubectl("create", "-f", f)
	e.kubectl("apply", "--server-side", "-f", filepath.Join(liqoExample, "compatibility-configmap.yaml"))
	e.kubectl("apply", "--server-side", "-f", filepath.Join(liqoExample, "testdata", "tenant-gateways.yaml"))
	for _, ns := range []string{"liqo", "liqo-tenant-cluster-2", "liqo-tenant-cluster-3"} {
		e.kubectl("rollout", "status", "deployment", "-n", ns, "--timeout=90s")
	}
	e.kubectl("rollout", "status", "daemonset/liqo-fabric", "-n", "liqo", "--timeout=90s")
}

// liqoCatalogConfigMap puts the example's catalog into a ConfigMap, every
// file of the catalog as a key (what a ConfigMap catalog reads).
func (e *env) liqoCatalogConfigMap(ns, name string) {
	e.t.Helper()
	data := map[string]string{}
	for _, f := range []string{"catalog.yaml", "plan.yaml.tmpl"} {
		b, err := os.ReadFile(filepath.Join(liqoExample, f))
		if err != nil {
			e.t.Fatal(err)
		}
		data[f] = string(b)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
	if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// grantLiqoUpgrader makes ServiceAccount sa in ns with what the Liqo
// plans need, cluster-wide: read the catalog, the matrix, the peers'
// Secrets and the nodes; apply CRDs and every kind of Liqo's chart;
// delete gateway pods; write the freeze's admission policy.
func (e *env) grantLiqoUpgrader(ns, sa string) {
	e.t.Helper()
	read := []string{"get", "list", "watch"}
	write := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	if _, err := e.cs.CoreV1().ServiceAccounts(ns).Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	name := ns + "-" + sa
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "namespaces", "events"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets", "controllerrevisions"}, Verbs: read},
		{APIGroups: []string{"core.liqo.io"}, Resources: []string{"foreignclusters"}, Verbs: []string{"list"}}, // the peers (spec.peers.expected)
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: write},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"},
			Verbs: []string{"get", "create", "patch", "delete"}},
		// Liqo's chart, every kind it renders; escalate and bind: its
		// roles grant what the upgrader itself does not hold.
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "services", "serviceaccounts"}, Verbs: write},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "daemonsets"}, Verbs: write},
		{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: write},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: write},
		{APIGroups: []string{"node.k8s.io"}, Resources: []string{"runtimeclasses"}, Verbs: write},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"},
			Verbs: append([]string{"escalate", "bind"}, write...)},
		{APIGroups: []string{"ipam.liqo.io", "networking.liqo.io", "offloading.liqo.io"}, Resources: []string{"*"}, Verbs: write},
	}}
	if _, err := e.cs.RbacV1().ClusterRoles().Create(e.ctx, role, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}
	if _, err := e.cs.RbacV1().ClusterRoleBindings().Create(e.ctx, binding, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// gatewayPods are the UIDs of the gateway pods in the tenant namespaces.
func (e *env) gatewayPods() []string {
	e.t.Helper()
	var uids []string
	for _, ns := range []string{"liqo-tenant-cluster-2", "liqo-tenant-cluster-3"} {
		pods, err := e.cs.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "networking.liqo.io/component=gateway"})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				uids = append(uids, string(p.UID))
			}
		}
	}
	sort.Strings(uids)
	return uids
}

// tryCreateForeignCluster dry-runs the creation of a peering: what the
// freeze denies.
func (e *env) tryCreateForeignCluster() error {
	fc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.liqo.io/v1beta1", "kind": "ForeignCluster",
		"metadata": map[string]any{"name": "probe-peer"},
		"spec":     map[string]any{"clusterID": "probe-peer"},
	}}
	_, err := e.dyn.Resource(foreignCluster).Create(e.ctx, fc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// TestLiqoProfileUpgradesThroughPlatformUpgrade: the Liqo profile takes
// Liqo v1.0.0 as released (its CRD files and its chart's rendition) to
// v1.1.0 through a PlatformUpgrade driven by the controller, with the
// catalog in a ConfigMap, as a ServiceAccount. `upshift plan` first shows
// the one hop. After it, every object the profile wrote (Liqo v1.1.0's
// CRDs and every object of its rendition) equals Liqo v1.1.0's, but for
// what the API server or a controller owns; the gateway pods were
// re-created; new peerings were denied while it ran and allowed after; no
// freeze policy is left.
func TestLiqoProfileUpgradesThroughPlatformUpgrade(t *testing.T) {
	if _, err := os.Stat(liqoData); err != nil {
		t.Skipf("Liqo's released artifacts are absent (%v): this test holds the profile against them", err)
	}
	e := newEnv(t, 8*time.Minute)
	e.installLiqo()
	crdsURL, manifestsURL := e.serveLiqo()

	t.Run("plan --to with the directory catalog", func(t *testing.T) {
		out, code := e.upshift("plan", "--to", "v1.1.0", "--catalog", liqoExample, "--set", "crdsURL="+crdsURL, "--set", "manifestsURL="+manifestsURL, "--allow-http-sources")
		if code != 0 {
			t.Fatalf("upshift plan exit %d:\n%s", code, out)
		}
		for _, want := range []string{"1.0.0", "1.1.0", "liqo-1.1.0", "freeze-peerings-and-offloads", "recreate-gateways"} {
			if !strings.Contains(out, want) {
				t.Errorf("upshift plan does not say %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "liqo-1.0.1") {
			t.Errorf("upshift plan stops at v1.0.1, a patch it may skip:\n%s", out)
		}
	})
	if t.Failed() {
		return
	}

	ns := testenv.Namespace(t, e.ctx, e.cs, "liqo-upgrade")
	runs := testenv.Namespace(t, e.ctx, e.cs, "liqo-runs")
	e.liqoCatalogConfigMap(ns, "liqo-catalog")
	e.grantLiqoUpgrader(ns, "liqo-upgrader")
	beforeGateways := e.gatewayPods()
	if len(beforeGateways) != 2 {
		t.Fatalf("gateway pods before the upgrade: %v, want 2", beforeGateways)
	}
	if err := e.tryCreateForeignCluster(); err != nil {
		t.Fatalf("a peering before the upgrade: %v; want allowed", err)
	}
	e.startController("liqo-controller", runs, ns)

	// Try to peer, all along the upgrade.
	var mu sync.Mutex
	var denied, otherErrs []string
	stop := make(chan struct{})
	probing := make(chan struct{})
	go func() {
		defer close(probing)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			err := e.tryCreateForeignCluster()
			mu.Lock()
			switch {
			case err == nil:
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "Liqo is being upgraded to v1.1.0"):
				denied = append(denied, err.Error())
			default:
				otherErrs = append(otherErrs, err.Error())
			}
			mu.Unlock()
		}
	}()

	pu := `apiVersion: upshift.dev/v1alpha1
kind: PlatformUpgrade
metadata: {name: liqo, namespace: ` + ns + `}
spec:
  targetVersion: v1.1.0
  catalog: {configMap: {name: liqo-catalog}}
  serviceAccountName: liqo-upgrader
  values: {crdsURL: "` + crdsURL + `", manifestsURL: "` + manifestsURL + `"}
`
	f := filepath.Join(t.TempDir(), "pu.yaml")
	if err := os.WriteFile(f, []byte(pu), 0o600); err != nil {
		t.Fatal(err)
	}
	e.kubectl("apply", "-f", f)
	st := e.waitPlatform(ns, "liqo", v1alpha1.PlatformSucceeded, 5*time.Minute).Status
	close(stop)
	<-probing

	if st.PreviousVersion != "1.0.0" || st.CurrentVersion != "1.1.0" || strings.Join(st.Path, " ") != "1.1.0" || st.Hop != "1/1" {
		t.Errorf("status: previous %s, current %s, path %v, hop %s; want 1.0.0, 1.1.0, [1.1.0], 1/1", st.PreviousVersion, st.CurrentVersion, st.Path, st.Hop)
	}
	if len(st.Hops) != 1 || st.Hops[0].From != "1.0.0" || st.Hops[0].To != "1.1.0" || st.Hops[0].Run != ns+".liqo-1.1.0" || st.Hops[0].Phase != v1alpha1.RunSucceeded {
		t.Errorf("hops:\n%s", toYAML(st.Hops))
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready: %+v", c)
	}

	diffs := append(e.crdDiffs(), e.liqoDiffs(e.liqoRendition("v1.1.0"))...)
	if len(diffs) > 0 {
		t.Errorf("%d fields differ from Liqo v1.1.0:\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
	afterGateways := e.gatewayPods()
	if len(afterGateways) != 2 {
		t.Errorf("gateway pods after the upgrade: %v, want 2", afterGateways)
	}
	for _, uid := range afterGateways {
		for _, old := range beforeGateways {
			if uid == old {
				t.Errorf("gateway pod %s was not re-created", uid)
			}
		}
	}

	mu.Lock()
	if len(denied) == 0 {
		t.Errorf("no peering was denied during the upgrade (other errors: %v): the freeze was not in force", otherErrs)
	}
	if len(otherErrs) > 0 {
		t.Errorf("peering attempts failed for another reason than the freeze: %v", otherErrs)
	}
	mu.Unlock()
	if err := e.tryCreateForeignCluster(); err != nil {
		t.Errorf("a peering after the upgrade: %v; want allowed", err)
	}
	vaps, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range vaps.Items {
		if strings.HasPrefix(p.Name, "upshift-freeze-") {
			t.Errorf("freeze policy %s is left after the upgrade", p.Name)
		}
	}
	events, err := e.c.ReadAudit()
	if err != nil {
		t.Fatal(err)
	}
	var created, deleted bool
	for _, ev := range localcluster.ByUser(events, "system:serviceaccount:"+ns+":liqo-upgrader") {
		if ev.IsWrite() && !ev.DryRun() && strings.HasPrefix(ev.Object(), "validatingadmissionpolicies upshift-freeze-") {
			created = created || ev.Verb == "create" || ev.Verb == "patch" // server-side apply
			deleted = deleted || ev.Verb == "delete"
		}
	}
	if !created || !deleted {
		t.Errorf("the ServiceAccount's writes of the freeze policy: applied %v, deleted %v; want both", created, deleted)
	}
}

func (e *env) waitPlatform(ns, name string, phase v1alpha1.PlatformPhase, timeout time.Duration) *v1alpha1.PlatformUpgrade {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	pu := &v1alpha1.PlatformUpgrade{}
	for time.Now().Before(deadline) {
		u, err := e.dyn.Resource(platformsGVR).Namespace(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatalf("get PlatformUpgrade %s: %v", name, err)
		}
		pu = &v1alpha1.PlatformUpgrade{}
		if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pu); err != nil {
			e.t.Fatal(err)
		}
		if pu.Status.Phase == phase && pu.Status.ObservedGeneration == pu.Generation {
			return pu
		}
		if done := pu.Status.Phase == v1alpha1.PlatformFailed || pu.Status.Phase == v1alpha1.PlatformRolledBack; done && phase != pu.Status.Phase {
			e.t.Fatalf("PlatformUpgrade %s is %s, want %s; status:\n%s", name, pu.Status.Phase, phase, toYAML(pu.Status))
		}
		time.Sleep(300 * time.Millisecond)
	}
	e.t.Fatalf("PlatformUpgrade %s is not %s after %s; status:\n%s", name, phase, timeout, toYAML(pu.Status))
	return nil
}
