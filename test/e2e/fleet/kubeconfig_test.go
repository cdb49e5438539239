package fleet_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

// A member's kubeconfig Secret is written by whoever may write Secrets
// in the fleet's namespace, not by the controller's operator: one whose
// tokenFile names a file of the controller's machine (its own
// ServiceAccount token, in a Pod) and whose server is a listener of the
// test, and one with an exec stanza, are refused. The listener never
// accepts a connection, the token never leaves, the program never runs,
// and the fleet's Ready condition names the Secret and the field.
func TestFleetRefusesUntrustedMemberKubeconfigs(t *testing.T) {
	t.Parallel()
	e := newMgmtEnv(t, 4*time.Minute, "fleet-kubeconfig", "fleet-kubeconfig-runs")
	ctx, cs, dyn, ns := e.ctx, e.cs, e.dyn, e.ns

	// Four simulated clusters at 1.30.0, two per fleet, rolled to 1.31.0:
	// the controller opens a cluster's kubeconfig for its member plan,
	// once the plugin has upgraded it.
	s := newSim(t, sim.Config{Count: 4, Version: "1.30.0"})
	addr, ca, client := servePlugin(t, s)
	lure := testenv.NewLure(t)
	secrets := map[string]map[string][]byte{
		"ops-tls":   {"ca.crt": ca.CertPEM, corev1.TLSCertKey: client.CertPEM, corev1.TLSPrivateKeyKey: client.KeyPEM},
		"tokenfile": {"value": lure.TokenFileKubeconfig()},
		"exec":      {"value": lure.ExecKubeconfig()},
	}
	readableSecrets(t, ctx, cs, ns, secrets)
	startController(t, e.mgmt, ns, e.runs)

	fleets := []struct{ name, field string }{{"tokenfile", "users[ops].tokenFile"}, {"exec", "users[ops].exec"}}
	for i, f := range fleets {
		cv := &v1alpha1.ClusterVersion{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.ClusterVersionKind},
			ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: ns},
			Spec: v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 1,
				OpsEndpoint: v1alpha1.OpsEndpoint{Endpoint: addr, TLSSecretRef: &v1alpha1.LocalObjectName{Name: "ops-tls"}}},
		}
		for _, id := range s.IDs()[2*i : 2*i+2] {
			cv.Spec.Clusters = append(cv.Spec.Clusters, v1alpha1.FleetCluster{ID: id, Version: "1.31.0",
				KubeconfigSecretRef: &v1alpha1.KubeconfigSecretRef{Name: f.name, Key: "value"}})
		}
		memberSpec("1.0.0", nil)(&cv.Spec)
		applyClusterVersion(t, ctx, dyn, cv)
	}
	for _, f := range fleets {
		want := []string{"Secret " + ns + "/" + f.name + " key value", f.field, "a kubeconfig read from the cluster may not"}
		var last string
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
			cv := getClusterVersion(t, ctx, dyn, ns, f.name)
			if c := meta.FindStatusCondition(cv.Status.Conditions, v1alpha1.ConditionReady); c != nil {
				last = c.Message
			}
			if containsAll(last, want) {
				t.Logf("%s: Ready: %s", f.name, last)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: Ready says %q after two minutes; want it to name %q (used: %s)", f.name, last, want, lure.Used())
			}
		}
	}
	// Anything the refused kubeconfigs could have started has had time.
	time.Sleep(2 * time.Second)
	if used := lure.Used(); used != "" {
		t.Errorf("the controller used the refused kubeconfigs: %s", used)
	}
}

// readableSecrets creates the Secrets and lets the namespace's default
// ServiceAccount (the fleets' identity) get them.
func readableSecrets(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, secrets map[string]map[string][]byte) {
	t.Helper()
	var names []string
	for name, data := range secrets {
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: names, Verbs: []string{"get"}}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "fleet"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: ns}}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func applyClusterVersion(t *testing.T, ctx context.Context, dyn dynamic.Interface, cv *v1alpha1.ClusterVersion) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cv)
	if err != nil {
		t.Fatal(err)
	}
	delete(m, "status")
	data, _ := json.Marshal(m)
	force := true
	if _, err := dyn.Resource(clusterVersions).Namespace(cv.Namespace).Patch(ctx, cv.Name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "kubeconfig-test", Force: &force}); err != nil {
		t.Fatalf("apply ClusterVersion %s: %v", cv.Name, err)
	}
}

func getClusterVersion(t *testing.T, ctx context.Context, dyn dynamic.Interface, ns, name string) *v1alpha1.ClusterVersion {
	t.Helper()
	u, err := dyn.Resource(clusterVersions).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cv := &v1alpha1.ClusterVersion{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cv); err != nil {
		t.Fatal(err)
	}
	return cv
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
