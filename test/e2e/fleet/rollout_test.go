package fleet_test

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/local"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/plugintest"
)

var clusterVersions = v1alpha1.GroupVersion.WithResource("clusterversions")

// fleetEnv is a management cluster running the controller, three member
// clusters and the local plugin over them.
type fleetEnv struct {
	*mgmtEnv
	ids     []string
	members map[string]kubernetes.Interface
	// configs and kubeconfigs reach each member as its admin.
	configs     map[string]*rest.Config
	kubeconfigs map[string][]byte
	plugin      *local.Plugin
	calls       *witness
	addr        string
}

const startVersion = "v1.34.0"

func newFleetEnv(t *testing.T) *fleetEnv {
	t.Helper()
	testenv.SkipIfShort(t)
	e := &fleetEnv{mgmtEnv: newMgmtEnv(t, 8*time.Minute, "fleet", "fleet-runs"), members: map[string]kubernetes.Interface{},
		configs: map[string]*rest.Config{}, kubeconfigs: map[string][]byte{}}

	configs := e.configs
	for i, m := range members(t, 3, startVersion) {
		id := fmt.Sprintf("member%d", i+1)
		e.ids = append(e.ids, id)
		configs[id] = m.RESTConfig()
		kc, err := os.ReadFile(m.KubeconfigPath())
		if err != nil {
			t.Fatal(err)
		}
		e.kubeconfigs[id] = kc
		e.members[id] = clientset(t, m.RESTConfig())
		e.prepareMember(id)
	}
	// A drain fails after 40s without a pod leaving its node: the blocked
	// member's drains wait that long (twice), and under CI's load a
	// member's budget controller has been seen to take over 20s to count
	// a replacement pod.
	p, err := local.New(local.Config{Clusters: configs, MasterLatency: time.Second, DrainTimeout: 40 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.plugin, e.calls = p, newWitness(p)

	addr, ca, client := servePlugin(t, e.calls)
	e.addr = addr
	e.tlsSecret("ops-tls", ca.CertPEM, client)
	return e
}

// prepareMember puts node-0 and node-1 in pool blue, node-2 in pool
// green, and runs a web Deployment of three whose PodDisruptionBudget
// keeps two.
func (e *fleetEnv) prepareMember(id string) {
	e.t.Helper()
	cs := e.members[id]
	for i, pool := range []string{"blue", "blue", "green"} {
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, local.LabelNodePool, pool)
		if _, err := cs.CoreV1().Nodes().Patch(e.ctx, localcluster.NodeName(i), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	replicas := int32(3)
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "web", Image: "web:1"}}}}},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	two := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(e.ctx, pdb, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	// The budget is measured from a steady state: a sample taken before
	// the pods first turn Ready would count them as disrupted.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		got, err := cs.AppsV1().Deployments("default").Get(e.ctx, "web", metav1.GetOptions{})
		if err == nil && got.Status.ReadyReplicas == replicas {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: web is not Ready after a minute: %v", id, err)
		}
	}
}

// tlsSecret stores the CA and the controller's client certificate, and
// lets the fleet's ServiceAccount read them (and nothing else).
func (e *fleetEnv) tlsSecret(name string, ca []byte, client plugintest.Pair) {
	e.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"ca.crt": ca, corev1.TLSCertKey: client.CertPEM, corev1.TLSPrivateKeyKey: client.KeyPEM}}
	if _, err := e.cs.CoreV1().Secrets(e.ns).Create(e.ctx, s, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: e.ns}}
	if _, err := e.cs.CoreV1().ServiceAccounts(e.ns).Create(e.ctx, sa, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		e.t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "fleet-" + name, Namespace: e.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{name}, Verbs: []string{"get"}}}}
	if _, err := e.cs.RbacV1().Roles(e.ns).Create(e.ctx, role, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleet-" + name, Namespace: e.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "fleet", Namespace: e.ns}}}
	if _, err := e.cs.RbacV1().RoleBindings(e.ns).Create(e.ctx, rb, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// apply creates or updates the fleet's ClusterVersion, with edits of its
// spec.
func (e *fleetEnv) apply(name, secret, version string, onFailure v1alpha1.FailurePolicy, edits ...func(*v1alpha1.ClusterVersionSpec)) {
	e.t.Helper()
	cv := &v1alpha1.ClusterVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.ClusterVersionKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: v1alpha1.ClusterVersionSpec{
			RequiredAvailableCount: 2,
			OpsEndpoint:            v1alpha1.OpsEndpoint{Endpoint: e.addr, TLSSecretRef: &v1alpha1.LocalObjectName{Name: secret}},
			ServiceAccountName:     "fleet",
			OnFailure:              onFailure,
		},
	}
	for _, id := range e.ids {
		cv.Spec.Clusters = append(cv.Spec.Clusters, v1alpha1.FleetCluster{ID: id, Version: version})
	}
	for _, edit := range edits {
		edit(&cv.Spec)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cv)
	if err != nil {
		e.t.Fatal(err)
	}
	delete(m, "status")
	data, _ := json.Marshal(m)
	force := true
	if _, err := e.dyn.Resource(clusterVersions).Namespace(e.ns).Patch(e.ctx, name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "fleet-test", Force: &force}); err != nil {
		e.t.Fatalf("apply ClusterVersion %s: %v", name, err)
	}
}

func (e *fleetEnv) get(name string) *v1alpha1.ClusterVersion {
	e.t.Helper()
	u, err := e.dyn.Resource(clusterVersions).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	cv := &v1alpha1.ClusterVersion{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cv); err != nil {
		e.t.Fatal(err)
	}
	return cv
}

// waitPhase waits until the fleet's status says phase for its current
// generation.
func (e *fleetEnv) waitPhase(name string, phase v1alpha1.FleetPhase, timeout time.Duration) *v1alpha1.ClusterVersion {
	e.t.Helper()
	var cv *v1alpha1.ClusterVersion
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		cv = e.get(name)
		if cv.Status.Phase == phase && cv.Status.ObservedGeneration == cv.Generation {
			return cv
		}
	}
	out, _ := json.MarshalIndent(cv.Status, "", "  ")
	e.t.Fatalf("ClusterVersion %s is not %s after %s; status:\n%s", name, phase, timeout, out)
	return nil
}

// versions reads each member's versions through the plugin.
func (e *fleetEnv) versions(id string) pluginsdk.ClusterVersion {
	e.t.Helper()
	v, err := e.plugin.GetVersion(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// at fails the test unless the member's control plane and pools run
// version.
func (e *fleetEnv) at(id, version string) {
	e.t.Helper()
	v := e.versions(id)
	ok := v.Master == version && len(v.NodePools) == 2
	for _, p := range v.NodePools {
		ok = ok && p.Version == version
	}
	if !ok {
		e.t.Errorf("%s runs %+v, want %s everywhere", id, v, version)
	}
}

func (e *fleetEnv) events(name string) string {
	e.t.Helper()
	list, err := e.cs.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	// In the order they happened (to the second: each revert takes
	// longer than that).
	sort.SliceStable(list.Items, func(i, j int) bool {
		return list.Items[i].FirstTimestamp.Before(&list.Items[j].FirstTimestamp)
	})
	var out []string
	for _, ev := range list.Items {
		out = append(out, ev.Type+" "+ev.Reason+": "+ev.Message)
	}
	return strings.Join(out, "\n")
}

// blockDrain pins a pod to the member's node-2 (pool green) under a
// PodDisruptionBudget that allows no disruption: green cannot drain.
func (e *fleetEnv) blockDrain(id string) func() {
	e.t.Helper()
	cs := e.members[id]
	one := int32(1)
	labels := map[string]string{"app": "pinned"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pinned", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"kubernetes.io/hostname": "node-2"},
				Containers:   []corev1.Container{{Name: "db", Image: "db:1"}}}}},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	all := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pinned", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &all, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(e.ctx, pdb, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		got, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(e.ctx, "pinned", metav1.GetOptions{})
		if err == nil && got.Status.CurrentHealthy == 1 && got.Status.ObservedGeneration == got.Generation {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatal("the pinned pod is not healthy after a minute")
		}
	}
	return func() {
		_ = cs.PolicyV1().PodDisruptionBudgets("default").Delete(e.ctx, "pinned", metav1.DeleteOptions{})
		_ = cs.AppsV1().Deployments("default").Delete(e.ctx, "pinned", metav1.DeleteOptions{})
	}
}
