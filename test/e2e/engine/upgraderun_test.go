package engine_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/config/crd"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

var crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// TestRunsAreUpgradeRuns: the first apply on a cluster installs the
// UpgradeRun CRD and says so; without the CRD, history and status say
// there is no run; a user who may not install CRDs is refused
// before anything changed, told the permission and the fix; once a
// cluster admin ran the fix (`upshift crds | kubectl apply -f -`), that
// user's runs are UpgradeRuns kubectl lists and waits for; a CRD of
// another version is updated, and said so.
func TestRunsAreUpgradeRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	first := w.mustExit(0, nil, "apply", "-f", w.configPlan("config-1", "1"))
	mustContain(t, "the first apply", first.stdout+first.stderr, "installed CRD upgraderuns.upshift.dev")
	if again := w.mustExit(0, nil, "apply", "-f", w.configPlan("config-2", "2")); strings.Contains(again.stdout+again.stderr, "CRD") {
		t.Errorf("the second apply speaks of the CRD, which was current:\n%s", again)
	}

	// A cluster without the CRD, and a user who may read CRDs but not
	// write them.
	if err := w.dyn.Resource(crdsGVR).Delete(w.ctx, crd.UpgradeRuns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.eventually("the CRD is gone", func() (bool, string) {
		_, err := w.dyn.Resource(crdsGVR).Get(w.ctx, crd.UpgradeRuns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), "still there"
	})
	// Read-only commands on a cluster without the CRD: no runs, no 404.
	mustContain(t, "history without the CRD", w.mustExit(0, nil, "history").stdout, "no runs on this cluster")
	mustContain(t, "status without the CRD", w.mustExit(1, nil, "status").stderr, "no run on this cluster yet")
	mustContain(t, "status NAME without the CRD", w.mustExit(1, nil, "status", "config-1").stderr, `no run named "config-1"`)
	const user = "no-crd-writer"
	kc := w.restrictedUser(user)
	env := []string{"KUBECONFIG=" + kc}
	startedAt := time.Now()
	refused := w.mustExit(1, env, "apply", "-f", w.configPlan("config-3", "3"))
	mustContain(t, "the refused apply", refused.stderr, "upgraderuns.upshift.dev", "patch customresourcedefinitions.apiextensions.k8s.io", "`upshift crds | kubectl apply -f -`", "nothing was changed")
	for _, e := range w.writesOf(user, startedAt) {
		t.Errorf("the refused apply wrote %s %s", e.Verb, e.Object())
	}

	// The fix, by a cluster admin.
	crds := w.mustExit(0, nil, "crds")
	kubectl := w.c.Binaries().Path("kubectl")
	fix := exec.CommandContext(w.ctx, kubectl, "--kubeconfig", w.c.KubeconfigPath(), "apply", "-f", "-")
	fix.Stdin = strings.NewReader(crds.stdout)
	if out, err := fix.CombinedOutput(); err != nil {
		t.Fatalf("upshift crds | kubectl apply -f -: %v\n%s", err, out)
	}
	ok := w.mustExit(0, env, "apply", "-f", w.configPlan("config-3", "3"))
	if strings.Contains(ok.stdout+ok.stderr, "CRD") {
		t.Errorf("the apply after the fix speaks of the CRD, which kubectl installed current:\n%s", ok)
	}

	kubectlOut := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(w.ctx, kubectl, append([]string{"--kubeconfig", w.c.KubeconfigPath(), "-n", runner.DefaultNamespace}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	list := kubectlOut("get", "upgraderuns")
	mustContain(t, "kubectl get upgraderuns", list, "NAME", "VERSION", "PHASE", "config-3", "Succeeded")
	mustContain(t, "kubectl wait", kubectlOut("wait", "--for=condition=Ready", "upgraderun/config-3", "--timeout=30s"), "condition met")

	// A CRD of another version is updated before the next run.
	patch := []byte(`{"metadata":{"annotations":{"` + crd.AnnotationDigest + `":"sha256:older"}}}`)
	if _, err := w.dyn.Resource(crdsGVR).Patch(w.ctx, crd.UpgradeRuns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	updated := w.mustExit(0, nil, "apply", "-f", w.configPlan("config-4", "4"))
	mustContain(t, "apply over an older CRD", updated.stdout+updated.stderr, "updated CRD upgraderuns.upshift.dev")
	mustContain(t, "kubectl wait", kubectlOut("wait", "--for=condition=Ready", "upgraderun/config-4", "--timeout=30s"), "condition met")
}

// configPlan writes a one-step plan that sets a ConfigMap in default.
func (w *world) configPlan(name, level string) string {
	w.t.Helper()
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "plan.yaml"), `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: `+name+`}
spec:
  version: "`+level+`"
  stages:
  - name: config
    steps:
    - name: settings
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: settings, namespace: default}
          data: {level: "`+level+`"}
`)
	return filepath.Join(dir, "plan.yaml")
}

// restrictedUser is a user who may do what a run needs (core objects,
// leases, upgraderuns) and read CRDs, but not write them; it returns the
// user's kubeconfig.
func (w *world) restrictedUser(user string) string {
	w.t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"", "coordination.k8s.io", "upshift.dev"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := w.cs.RbacV1().ClusterRoles().Create(w.ctx, role, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}
	if _, err := w.cs.RbacV1().ClusterRoleBindings().Create(w.ctx, binding, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	kc, err := w.c.UserKubeconfig(user)
	if err != nil {
		w.t.Fatal(err)
	}
	// The authorizer learns of the binding from its informers: wait
	// until the user may list runs.
	w.eventually("the user's binding is in force", func() (bool, string) {
		r := w.upshift([]string{"KUBECONFIG=" + kc}, "history")
		return r.code == 0, r.String()
	})
	return kc
}

// writesOf are the writes the user made since t that the API server
// accepted, from the audit log.
func (w *world) writesOf(user string, since time.Time) []localcluster.AuditEvent {
	w.t.Helper()
	time.Sleep(time.Second) // the audit log is written in batches
	events, err := w.c.ReadAudit()
	if err != nil {
		w.t.Fatal(err)
	}
	var out []localcluster.AuditEvent
	for _, e := range localcluster.ByUser(events, user) {
		if e.IsWrite() && !e.RequestReceivedTimestamp.Before(since) && e.ResponseStatus != nil && e.ResponseStatus.Code < 300 {
			out = append(out, e)
		}
	}
	return out
}
