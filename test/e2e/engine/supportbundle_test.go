package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// readBundle is a bundle's entries by name.
func readBundle(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Untar(t, data)
}

// `upshift support-bundle` writes the run, its report, the events,
// objects and container logs of the namespace its plan's objects live in
// and of the runs namespace, and the nodes; a Secret's value and an
// inline env value of that namespace (also in kubectl's last-applied
// copy) appear nowhere in it.
func TestSupportBundle(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{Nodes: 1, Name: "bundle"})
	const secretMarker, envMarker = "s3cr3t-bundle-value-0001", "env-bundle-value-0002"
	if _, err := w.cs.CoreV1().Secrets("default").Create(w.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token"},
		StringData: map[string]string{"token": secretMarker}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	// kubectl apply's copy of the object holds the env value in plain text.
	applied := `{"spec":{"template":{"spec":{"containers":[{"env":[{"name":"API_KEY","value":"` + envMarker + `"}]}]}}}}`
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": applied}}, Spec: appsv1.DeploymentSpec{Replicas: &one,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.com/web:1", Env: []corev1.EnvVar{{Name: "API_KEY", Value: envMarker}}}}}}}}
	if _, err := w.cs.AppsV1().Deployments("default").Create(w.ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.mustExit(0, nil, "apply", "-f", w.configPlan("bundle-1", "1"))
	w.eventually("the web pod running", func() (bool, string) {
		pods, err := w.cs.CoreV1().Pods("default").List(w.ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 1 && pods.Items[0].Status.Phase == corev1.PodRunning, "no running web pod"
	})

	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	r := w.mustExit(0, nil, "support-bundle", "-o", out)
	mustContain(t, "support-bundle's output", r.stdout, "wrote "+out, "default", "upshift-system")
	b := readBundle(t, out)
	for _, name := range []string{"runs/bundle-1.yaml", "runs/bundle-1.report.md", "nodes.yaml", "summary.txt",
		"namespaces/default/events.txt", "namespaces/default/deployments.yaml", "namespaces/default/secrets.yaml",
		"namespaces/default/configmaps.yaml", "namespaces/upshift-system/secrets.yaml"} {
		if _, ok := b[name]; !ok {
			t.Errorf("the bundle lacks %s; it holds %d files", name, len(b))
		}
	}
	mustContain(t, "the report", b["runs/bundle-1.report.md"], "# Upgrade report: run bundle-1")
	mustContain(t, "the ConfigMap the plan wrote (its keys, not its values)", b["namespaces/default/configmaps.yaml"], "level:", "not collected")
	logged := false
	for name := range b {
		logged = logged || strings.HasPrefix(name, "namespaces/default/logs/web-")
	}
	if !logged {
		t.Error("the bundle holds no log of the web pod")
	}
	for name, content := range b {
		if strings.Contains(content, secretMarker) || strings.Contains(content, envMarker) {
			t.Errorf("%s holds a secret value", name)
		}
	}
	if w.mustExit(1, nil, "support-bundle", "-o", out).stderr == "" {
		t.Error("support-bundle overwrote an existing file without a word")
	}
}
