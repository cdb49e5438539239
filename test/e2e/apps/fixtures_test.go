package apps_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// deployment creates a Deployment of replicas pods running image.
func (e *env) deployment(name, image string, replicas int32) *appsv1.Deployment {
	e.t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: image}}},
			},
		},
	}
	got, err := e.cs.AppsV1().Deployments(e.ns).Create(e.ctx, d, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func (e *env) getDeployment(name string) *appsv1.Deployment {
	e.t.Helper()
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// grant gives ServiceAccount sa of the test's namespace what a rollout
// needs (testenv.GrantRollouts).
func (e *env) grant(sa string) {
	e.t.Helper()
	testenv.GrantRollouts(e.t, e.ctx, e.cs, e.ns, sa)
}

// seedManifest is the ManagedApplication of the application-upgrade
// seed's README (seed 002, beside the project in ../shared/seeds), with
// apiVersion and kind changed to AppRollout's: nothing else. The test
// skips when the seeds are not there.
func seedManifest(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "..", "shared", "seeds", "002_*.txt"))
	if len(files) == 0 {
		t.Skip("the seeds are not beside the project (../shared/seeds/002_*.txt): the ManagedApplication manifest cannot be read")
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)kubectl apply -f - <<EOF\n(.*?)\nEOF`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no `kubectl apply -f - <<EOF` manifest", files[0])
	}
	y := string(m[1])
	for _, r := range [][2]string{{"apiVersion: apps.example.com/v1alpha1", "apiVersion: upshift.dev/v1alpha1"}, {"kind: ManagedApplication", "kind: AppRollout"}} {
		if !strings.Contains(y, r[0]) {
			t.Fatalf("the seed's manifest has no %q:\n%s", r[0], y)
		}
		y = strings.Replace(y, r[0], r[1], 1)
	}
	return y
}

// repoRoot is the directory of go.mod above the test.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
