package engine

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The run record and apply's decisions hold facts; each driver renders
// its own command text from them (the CLI, a controller, the HTTP API).
func TestRecordAndDecisionsHoldNoCommandText(t *testing.T) {
	noCommand := func(what, s string) {
		t.Helper()
		for _, cmd := range []string{"upshift ", "--retry", "--step", "apply -f"} {
			if strings.Contains(s, cmd) {
				t.Errorf("%s holds driver text %q: %s", what, cmd, s)
			}
		}
	}
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	p.Spec.Stages = []v1alpha1.Stage{{Name: "hold", Steps: []v1alpha1.Step{
		{Name: "plain", Approval: &v1alpha1.ApprovalStep{}},
		{Name: "told", Approval: &v1alpha1.ApprovalStep{Message: "check the dashboards"}},
	}}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewRun(p, "sha256:a", nil, now)
	for i, want := range []string{"waiting for approval", "check the dashboards (waiting for approval)"} {
		Begin(r, Action{Kind: RunStep, Stage: 0, Index: i}, now)
		if got := r.Status.Stages[0].Steps[i].Message; got != want {
			t.Errorf("step %d waits with message %q, want %q", i, got, want)
		}
	}

	unfinished := *r
	rolledBack := *r
	rolledBack.Status.Phase = v1alpha1.RunRolledBack
	for _, c := range []struct {
		name     string
		existing *v1alpha1.UpgradeRun
		others   []v1alpha1.UpgradeRun
		digest   string
		next     NextAction
	}{
		{name: "another run unfinished", others: []v1alpha1.UpgradeRun{unfinished}, digest: "sha256:a", next: FinishRun},
		{name: "unfinished, plan changed", existing: &unfinished, digest: "sha256:b", next: RollBackRun},
		{name: "rolled back", existing: &rolledBack, digest: "sha256:a", next: RetryRun},
	} {
		d := DecideApply(c.existing, c.others, c.digest, nil, false)
		noCommand(c.name+": reason", d.Reason)
		if d.Next != c.next || d.Run != "demo" {
			t.Errorf("%s: next %q for run %q, want %q for demo", c.name, d.Next, d.Run, c.next)
		}
	}
}
