package profiles_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"reflect"
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
	liqoExample = filepath.Join(repo, "examples", "liqo")
	// liqoCRDs are Liqo's 28 CRDs per release, rebuilt from the liqo-crds
	// chart (test/bench/liqo/gen): what crdsURL serves in the test.
	liqoCRDs       = filepath.Join(repo, "test", "bench", "liqo")
	foreignCluster = schema.GroupVersionResource{Group: "core.liqo.io", Version: "v1beta1", Resource: "foreignclusters"}
	platformsGVR   = v1alpha1.GroupVersion.WithResource("platformupgrades")
)

// serveLiqoCRDs serves GET /<tag>/<file> from test/bench/liqo/<tag>/crds
// on 127.0.0.1: the mirror the catalog's crdsURL points at in tests, so
// that nothing is downloaded. It returns the crdsURL value.
func serveLiqoCRDs(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tag, file := path.Split(strings.TrimPrefix(r.URL.Path, "/"))
		p := filepath.Join(liqoCRDs, strings.Trim(tag, "/"), "crds", file)
		if strings.Contains(r.URL.Path, "..") {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, p)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/{tag}"
}

// installLiqo applies Liqo v1.0.0's CRDs, the example's v1.0.0 install
// and the compatibility matrix, and waits until every workload is ready.
func (e *env) installLiqo() {
	e.t.Helper()
	e.kubectl("apply", "--server-side", "-f", filepath.Join(liqoCRDs, "v1.0.0", "crds"))
	e.kubectl("wait", "--for=condition=Established", "crd", "-l", "app.kubernetes.io/part-of=liqo", "--timeout=60s")
	e.kubectl("apply", "--server-side", "-f", filepath.Join(liqoExample, "install", "v1.0.0"))
	e.kubectl("apply", "--server-side", "-f", filepath.Join(liqoExample, "compatibility-configmap.yaml"))
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
// Secrets and the nodes; apply CRDs; set images; apply the gateway
// templates; delete gateway pods; write the freeze's admission policy.
func (e *env) grantLiqoUpgrader(ns, sa string) {
	e.t.Helper()
	read := []string{"get", "list", "watch"}
	write := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	if _, err := e.cs.CoreV1().ServiceAccounts(ns).Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	name := ns + "-" + sa
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "nodes", "namespaces", "events"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "daemonsets"}, Verbs: write},
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets", "controllerrevisions"}, Verbs: read},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: write},
		{APIGroups: []string{"networking.liqo.io"}, Resources: []string{"wggatewayservertemplates", "wggatewayclienttemplates"}, Verbs: write},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"},
			Verbs: []string{"get", "create", "patch", "delete"}},
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

// images are a workload's container images by container name.
func (e *env) images(kind, ns, name string) (map[string]string, []corev1.EnvVar) {
	e.t.Helper()
	var spec corev1.PodSpec
	switch kind {
	case "DaemonSet":
		d, err := e.cs.AppsV1().DaemonSets(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		spec = d.Spec.Template.Spec
	default:
		d, err := e.cs.AppsV1().Deployments(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		spec = d.Spec.Template.Spec
	}
	out := map[string]string{}
	for _, c := range spec.Containers {
		out[c.Name] = c.Image
	}
	return out, spec.Containers[0].Env
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

// TestLiqoProfileUpgradesThroughPlatformUpgrade: the Liqo profile
// upgrades a Liqo-shaped install through PlatformUpgrade with the
// controller. `upshift plan --to v1.1.0 --catalog examples/liqo` first
// shows the hop (v1.0.1, a patch, skipped); then a PlatformUpgrade with
// the catalog in a ConfigMap, run as a ServiceAccount, takes v1.0.0 to
// v1.1.0: the controller-manager, ipam, proxy and fabric on the new
// images, the manager's env kept, the gateway templates on the new
// images, the gateway pods re-created, new peerings denied while it ran
// and allowed again after, no freeze policy left.
func TestLiqoProfileUpgradesThroughPlatformUpgrade(t *testing.T) {
	e := newEnv(t, 8*time.Minute)
	crdsURL := serveLiqoCRDs(t)
	e.installLiqo()

	t.Run("plan --to with the directory catalog", func(t *testing.T) {
		out, code := e.upshift("plan", "--to", "v1.1.0", "--catalog", liqoExample, "--set", "crdsURL="+crdsURL, "--allow-http-sources")
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
	_, beforeEnv := e.images("Deployment", "liqo", "liqo-controller-manager")
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
  values: {crdsURL: "` + crdsURL + `"}
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
	if len(st.Hops) != 1 || st.Hops[0].From != "1.0.0" || st.Hops[0].To != "1.1.0" || st.Hops[0].Run != "liqo-1.1.0" || st.Hops[0].Phase != v1alpha1.RunSucceeded {
		t.Errorf("hops:\n%s", toYAML(st.Hops))
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready: %+v", c)
	}

	for _, w := range []struct{ kind, name, container, image string }{
		{"Deployment", "liqo-controller-manager", "controller-manager", "ghcr.io/liqotech/liqo-controller-manager:v1.1.0"},
		{"Deployment", "liqo-ipam", "ipam", "ghcr.io/liqotech/ipam:v1.1.0"},
		{"Deployment", "liqo-proxy", "proxy", "ghcr.io/liqotech/proxy:v1.1.0"},
		{"DaemonSet", "liqo-fabric", "fabric", "ghcr.io/liqotech/fabric:v1.1.0"},
	} {
		if got, _ := e.images(w.kind, "liqo", w.name); got[w.container] != w.image {
			t.Errorf("%s liqo/%s container %s: %s, want %s", w.kind, w.name, w.container, got[w.container], w.image)
		}
	}
	if _, afterEnv := e.images("Deployment", "liqo", "liqo-controller-manager"); !reflect.DeepEqual(beforeEnv, afterEnv) {
		t.Errorf("controller-manager env changed:\nbefore %s\nafter %s", toYAML(beforeEnv), toYAML(afterEnv))
	}
	tmplGVR := schema.GroupVersionResource{Group: "networking.liqo.io", Version: "v1beta1", Resource: "wggatewayservertemplates"}
	tmpl, err := e.dyn.Resource(tmplGVR).Namespace("liqo").Get(e.ctx, "wireguard-server", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b := toYAML(tmpl.Object); !strings.Contains(b, "ghcr.io/liqotech/gateway/wireguard:v1.1.0") || strings.Contains(b, ":v1.0.0") {
		t.Errorf("WgGatewayServerTemplate wireguard-server is not on v1.1.0:\n%s", b)
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
		time.Sleep(300 * time.Millisecond)
	}
	e.t.Fatalf("PlatformUpgrade %s is not %s after %s; status:\n%s", name, phase, timeout, toYAML(pu.Status))
	return nil
}
