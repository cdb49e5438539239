package controller_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// upshift runs the CLI as the test's admin on the test's runs namespace.
func (e *env) upshift(args ...string) (string, error) {
	e.t.Helper()
	cmd := exec.CommandContext(e.ctx, e.bin, append(args, "--kubeconfig", e.c.KubeconfigPath(), "--runs-namespace", e.runs)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The CLI works on a run the controller drives: status shows it, approve
// lets it go on, and a rollback made with the CLI shows in the plan's
// status (the controller watches runs, not only plans).
func TestCLIActsOnAControllerRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.startController("ctl-cli", nil)
	e.createPlan(e.webPlan("web-2", "2.0", "2.0", "upgrader", true))
	e.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute)

	out, err := e.upshift("status", "web-2")
	if err != nil || !strings.Contains(out, "go-ahead") {
		t.Errorf("upshift status web-2: %v\n%s", err, out)
	}
	if out, err := e.upshift("approve", "web-2"); err != nil {
		t.Fatalf("upshift approve web-2: %v\n%s", err, out)
	}
	e.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, time.Minute)

	if out, err := e.upshift("rollback", "web-2"); err != nil {
		t.Fatalf("upshift rollback web-2: %v\n%s", err, out)
	}
	p := e.waitCondition("web-2", v1alpha1.ConditionRolledBack, metav1.ConditionTrue, "", 30*time.Second)
	if p.Status.Phase != v1alpha1.RunRolledBack {
		t.Errorf("plan phase %s after the CLI's rollback, want RolledBack", p.Status.Phase)
	}
	if got := e.webImage(); got != "example.com/web:"+startVersion {
		t.Errorf("web's image is %s after the rollback, want %s", got, startVersion)
	}
}
