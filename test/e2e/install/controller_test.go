package install_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// The controller runs with the token of the chart's own ServiceAccount
// and nothing else, and takes a plan to Ready: the chart's RBAC is
// enough, and the plan's rights come from its serviceAccountName alone
// (the chart's ServiceAccount may not touch Deployments itself).
func TestControllerRunsWithTheChartsRights(t *testing.T) {
	testenv.SkipIfShort(t)
	admin := testenv.Cluster(t).RESTConfig()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	rel := installChart(t, ctx, admin, map[string]any{"replicas": 0})
	sa := serviceAccountConfig(t, ctx, admin, rel.Namespace, rel.ServiceAccount)
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, ctx, cs, "install-plan")
	planSA := planServiceAccount(t, ctx, cs, ns)
	createDeployment(t, ctx, cs, ns)

	bin := testenv.UpshiftBinary(t)
	kubeconfig := writeKubeconfig(t, sa)
	ctl := exec.Command(bin, "controller", "--kubeconfig", kubeconfig, "--namespace", rel.Namespace,
		"--watch-namespaces", ns, "--metrics-addr", "0", "--health-probe-addr", "0")
	ctl.Env = append(os.Environ(), "KUBECONFIG=")
	out := &testenv.SyncBuffer{}
	ctl.Stdout, ctl.Stderr = out, out
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ctl.Process.Kill()
		_ = ctl.Wait()
		if t.Failed() {
			t.Logf("controller output:\n%s", out.String())
		}
	})

	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	plan := &v1alpha1.UpgradePlan{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.PlanKind},
		ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: ns},
		Spec: v1alpha1.UpgradePlanSpec{Version: "2", ServiceAccountName: planSA, Stages: []v1alpha1.Stage{{
			Name:  "app",
			Steps: []v1alpha1.Step{{Name: "web", Image: &v1alpha1.ImageStep{Kind: "Deployment", Namespace: ns, Name: "web", Images: map[string]string{"web": "example.com/web:2"}}}},
			Gates: []v1alpha1.Gate{{Ready: &v1alpha1.ReadyGate{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}}},
		}}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(plan)
	if err != nil {
		t.Fatal(err)
	}
	plans := dyn.Resource(v1alpha1.GroupVersion.WithResource("upgradeplans")).Namespace(ns)
	if _, err := plans.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		u, err := plans.Get(ctx, "web-2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := &v1alpha1.UpgradePlan{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, got); err != nil {
			t.Fatal(err)
		}
		if meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionReady) {
			break
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
			t.Fatalf("the plan stalled: %s: %s", c.Reason, c.Message)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the plan did not become Ready; status: %+v", got.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "example.com/web:2" {
		t.Errorf("web's image is %s, want example.com/web:2", img)
	}
}

// planServiceAccount is the plan's ServiceAccount, allowed what an image
// step and a ready gate on one Deployment need, in ns only.
func planServiceAccount(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) string {
	t.Helper()
	const name = "upgrader"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func createDeployment(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.com/web:1"}}}},
	}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// writeKubeconfig writes a kubeconfig holding only cfg's server, CA and
// bearer token, as a user would build one from `kubectl create token`.
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["sa"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "sa"}
	kc.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
