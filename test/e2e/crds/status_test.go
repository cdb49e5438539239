package crds_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/conditions"
	"github.com/upshift-dev/upshift/internal/engine"
)

// Status is a subresource: a create or a spec update cannot set it, an
// update through /status sets only it (the generation stays), and the
// Ready condition the conditions package computes is what `kubectl wait
// --for=condition=Ready` and kstatus read.
func TestStatusSubresource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, u := demoPlan(t, "1.0.0", e.ns)
	res := e.dyn.Resource(plans).Namespace(e.ns)

	// A status sent with the create is dropped.
	_ = unstructured.SetNestedField(u.Object, "Succeeded", "status", "phase")
	created, err := res.Create(e.ctx, u, strict)
	if err != nil {
		t.Fatal(err)
	}
	if ph, found, _ := unstructured.NestedString(created.Object, "status", "phase"); found {
		t.Errorf("create set status.phase %q; a create must not set status", ph)
	}

	// The status of a succeeded run, through /status.
	run := engine.NewRun(p, "sha256:demo", nil, time.Now())
	for a := engine.Next(run); a.Kind != engine.Done; a = engine.Next(run) {
		engine.Begin(run, a, time.Now())
		engine.Complete(run, a, engine.Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, SHA256: "abc", Objects: 1}}, time.Now())
	}
	plan := fromUnstructured[v1alpha1.UpgradePlan](t, created)
	conditions.SetPlanStatus(&plan.Status, plan.Generation, run, metav1.Now())
	updated, err := res.UpdateStatus(e.ctx, toUnstructured(t, plan), metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if updated.GetGeneration() != created.GetGeneration() {
		t.Errorf("a status update moved the generation from %d to %d", created.GetGeneration(), updated.GetGeneration())
	}
	back := fromUnstructured[v1alpha1.UpgradePlan](t, updated)
	if c := meta.FindStatusCondition(back.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue || back.Status.Phase != v1alpha1.RunSucceeded {
		t.Errorf("after the status update: Ready %+v, phase %q; want Ready True, Succeeded", c, back.Status.Phase)
	}
	if got := kstatus(t, updated); got != status.CurrentStatus {
		t.Errorf("kstatus of the stored plan: %s, want Current", got)
	}
	kubectlWaitReady(t, e, p.Name)

	// A spec update carrying another status changes the spec only.
	edited := updated.DeepCopy()
	_ = unstructured.SetNestedField(edited.Object, false, "spec", "autoRollback")
	_ = unstructured.SetNestedField(edited.Object, "Failed", "status", "phase")
	after, err := res.Update(e.ctx, edited, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update spec: %v", err)
	}
	if ph, _, _ := unstructured.NestedString(after.Object, "status", "phase"); ph != string(v1alpha1.RunSucceeded) {
		t.Errorf("a spec update changed status.phase to %q", ph)
	}
	if ar, _, _ := unstructured.NestedBool(after.Object, "spec", "autoRollback"); ar || after.GetGeneration() != updated.GetGeneration()+1 {
		t.Errorf("spec update: autoRollback %t, generation %d; want false, %d", ar, after.GetGeneration(), updated.GetGeneration()+1)
	}
	// The status now describes an older generation: kstatus says so.
	if got := kstatus(t, after); got != status.InProgressStatus {
		t.Errorf("kstatus after a spec edit the status has not observed: %s, want InProgress", got)
	}
}

func kstatus(t *testing.T, u *unstructured.Unstructured) status.Status {
	t.Helper()
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

// kubectlWaitReady runs the cluster's own kubectl: `kubectl wait
// --for=condition=Ready upgradeplan/NAME` must return at once.
func kubectlWaitReady(t *testing.T, e *env, name string) {
	t.Helper()
	kubectl := e.c.Binaries().Path("kubectl")
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", e.c.KubeconfigPath(), "-n", e.ns,
		"wait", "--for=condition=Ready", "--timeout=10s", "upgradeplan/"+name)
	cmd.Env = append(os.Environ(), "KUBECONFIG=") // only the flag counts
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "condition met") {
		t.Errorf("kubectl wait --for=condition=Ready upgradeplan/%s: %v\n%s", name, err, out)
	}
}
