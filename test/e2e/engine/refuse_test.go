package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// TestBadPlansChangeNothing: every invalid plan of the corpus and six
// plans that fail preflight are refused with exit 1 and a message naming
// the field; the audit log shows no write by Upshift's user but access
// reviews.
func TestBadPlansChangeNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	installWrites := len(w.upshiftWrites())

	corpus, err := filepath.Glob(filepath.Join(repoRoot(), "internal", "plan", "testdata", "invalid", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 20 {
		t.Fatalf("the invalid-plan corpus has %d plans, want at least 20", len(corpus))
	}
	for _, f := range corpus {
		r := w.upshift(nil, "apply", "-f", f)
		if r.code != 1 {
			t.Errorf("%s: want exit 1, got %s", filepath.Base(f), r)
			continue
		}
		if !strings.Contains(r.stderr, "spec.") && !strings.Contains(r.stderr, "metadata.") && !strings.Contains(r.stderr, "apiVersion") && !strings.Contains(r.stderr, "kind") {
			t.Errorf("%s: the message names no field:\n%s", filepath.Base(f), r.stderr)
		}
	}

	dir := t.TempDir()
	preflight := []struct {
		name, step, want string
	}{
		{"missing namespace", "image: {kind: Deployment, namespace: nowhere, name: web, images: {app: x:1}}", "spec.stages[0].steps[0].image.namespace"},
		{"missing container", "image: {kind: Deployment, namespace: shop, name: web, images: {sidecar: x:1}}", `spec.stages[0].steps[0].image.images[sidecar]`},
		{"unknown kind", "manifests: {inline: \"apiVersion: example.com/v1\\nkind: Widget\\nmetadata: {name: w, namespace: shop}\\n\"}", "Widget example.com/v1"},
		{"removed api", "manifests: {inline: \"apiVersion: autoscaling/v2beta2\\nkind: HorizontalPodAutoscaler\\nmetadata: {name: web, namespace: shop}\\n\"}", "was removed in Kubernetes 1.26: use autoscaling/v2"},
		{"unreadable url", "manifests: {url: \"http://127.0.0.1:1/platform.yaml\"}", "spec.stages[0].steps[0].manifests"},
	}
	for _, p := range preflight {
		path := filepath.Join(dir, strings.ReplaceAll(p.name, " ", "-")+".yaml")
		write(t, path, fmt.Sprintf("apiVersion: upshift.dev/v1alpha1\nkind: UpgradePlan\nmetadata: {name: bad}\nspec:\n  version: 9.9.9\n  stages:\n  - name: only\n    steps:\n    - name: s\n      %s\n", p.step))
		r := w.upshift(nil, "apply", "-f", path)
		if r.code != 1 || !strings.Contains(r.stderr, p.want) {
			t.Errorf("%s: want exit 1 naming %q, got %s", p.name, p.want, r)
		}
	}

	// A user who may read but not write: the access review says which
	// writes are missing.
	restricted := w.restrictedKubeconfig(t)
	plan := w.upgradePlan(planOptions{})
	r := w.upshift([]string{"KUBECONFIG=" + restricted}, "apply", "-f", plan)
	if r.code != 1 || !strings.Contains(r.stderr, "may not patch deployments.apps in namespace shop") {
		t.Errorf("restricted user: want exit 1 naming the missing permission, got %s", r)
	}
	if strings.Contains(r.stderr, "may not get deployments") {
		t.Errorf("restricted user: a granted verb reported missing:\n%s", r.stderr)
	}

	time.Sleep(time.Second) // the audit log is written asynchronously
	writes := w.upshiftWrites()[installWrites:]
	for _, e := range writes {
		t.Errorf("a refused plan wrote: %s %s", e.Verb, e.Object())
	}
	events, err := w.c.ReadAudit()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range localcluster.ByUser(events, "restricted-operator") {
		if e.IsWrite() {
			t.Errorf("the restricted user wrote: %s %s", e.Verb, e.Object())
		}
	}
}

// restrictedKubeconfig is a user who may read everything but write nothing.
func (w *world) restrictedKubeconfig(t *testing.T) string {
	t.Helper()
	_, err := w.cs.RbacV1().ClusterRoleBindings().Create(w.ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "restricted-operator-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "restricted-operator"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := w.c.UserKubeconfig("restricted-operator")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kc); err != nil {
		t.Fatal(err)
	}
	return kc
}
