package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/runner"
)

// approvalRun is a run of two approval steps, waiting at the first.
func approvalRun() *v1alpha1.UpgradeRun {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo-1.1.0"}}
	p.Spec.Stages = []v1alpha1.Stage{
		{Name: "hold-1", Steps: []v1alpha1.Step{{Name: "first", Approval: &v1alpha1.ApprovalStep{}}}},
		{Name: "hold-2", Steps: []v1alpha1.Step{{Name: "second", Approval: &v1alpha1.ApprovalStep{Message: "check the dashboards"}}}},
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := engine.NewRun(p, "sha256:a", nil, now)
	engine.Begin(r, engine.Action{Kind: engine.RunStep, Stage: 0, Index: 0}, now)
	return r
}

func TestStepMessageSaysHowToApprove(t *testing.T) {
	r := approvalRun()
	if got, want := stepMessage(r, 0, 0), "waiting for approval: upshift approve demo-1.1.0"; got != want {
		t.Errorf("waiting step: %q, want %q", got, want)
	}
	if got := stepMessage(r, 1, 0); got != "" {
		t.Errorf("a pending step shows %q", got)
	}
	r.Status.Stages[1].Steps[0].Phase = v1alpha1.PhaseRunning
	if got, want := stepMessage(r, 1, 0), "check the dashboards (waiting for approval: upshift approve demo-1.1.0)"; got != want {
		t.Errorf("waiting step with a message: %q, want %q", got, want)
	}
	if _, err := engine.Approve(r, "first", "alice@laptop", time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := stepMessage(r, 0, 0); !strings.Contains(got, "approved by alice@laptop") || strings.Contains(got, "upshift approve") {
		t.Errorf("approved step: %q", got)
	}
	r.Status.Phase = v1alpha1.RunRolledBack
	if got := stepMessage(r, 1, 0); strings.Contains(got, "upshift approve") {
		t.Errorf("a rolled-back run still asks for approval: %q", got)
	}
}

func TestApprovalRefusalsNameTheCommand(t *testing.T) {
	refusal := func(r *v1alpha1.UpgradeRun, step string) error {
		t.Helper()
		_, err := engine.Approve(r, step, "alice@laptop", time.Now())
		if err == nil {
			t.Fatalf("approve %q: not refused", step)
		}
		// As the runner returns it.
		return withApprovalHint(fmt.Errorf("%w: %w", runner.ErrRefused, err), r.Name)
	}
	r := approvalRun()
	r.Status.Stages[0].Steps[0].Phase = v1alpha1.PhasePending // waits nowhere
	err := refusal(r, "")
	if !errors.Is(err, runner.ErrRefused) {
		t.Errorf("the hint lost the refusal (exit 1): %v", err)
	}
	mustHave(t, err.Error(), "waits at no approval step", "upshift approve demo-1.1.0 --step STEP, with STEP one of first, second")

	mustHave(t, refusal(r, "nope").Error(), `no approval step "nope"`, "--step STEP, with STEP one of first, second")

	if _, err := engine.Approve(r, "second", "alice@laptop", time.Now()); err != nil {
		t.Fatal(err)
	}
	mustHave(t, refusal(r, "").Error(), "upshift approve demo-1.1.0 --step first")

	r.Status.Phase = v1alpha1.RunRolledBack
	mustHave(t, refusal(r, "first").Error(), "is RolledBack", "--retry starts a new attempt")
}

func TestDecisionHints(t *testing.T) {
	for _, c := range []struct {
		d    engine.Decision
		want string
	}{
		{engine.Decision{Next: engine.FinishRun, Run: "other"}, " (upshift apply, retry, rollback or abort other)"},
		{engine.Decision{Next: engine.RollBackRun, Run: "demo"}, " (upshift rollback demo)"},
		{engine.Decision{Next: engine.RetryRun, Run: "demo"}, " (apply --retry starts a new attempt)"},
		{engine.Decision{}, ""},
	} {
		if got := decisionHint(c.d); got != c.want {
			t.Errorf("%q: %q, want %q", c.d.Next, got, c.want)
		}
	}
	err := withDecisionHint(fmt.Errorf("%w: run other is unfinished", runner.ErrRefused), engine.Decision{Next: engine.FinishRun, Run: "other"})
	if !errors.Is(err, runner.ErrRefused) || !strings.HasSuffix(err.Error(), "(upshift apply, retry, rollback or abort other)") {
		t.Errorf("refusal with hint: %v", err)
	}
}

func TestRunHint(t *testing.T) {
	r := approvalRun()
	mustHave(t, runHint(r), "waiting for approval of step first: `upshift approve demo-1.1.0`")
	r.Status.Stages[0].Steps[0].Phase = v1alpha1.PhaseSucceeded
	mustHave(t, runHint(r), "`upshift apply -f` with the same plan resumes it")
	for phase, want := range map[v1alpha1.RunPhase]string{
		v1alpha1.RunRollingBack:    "`upshift rollback demo-1.1.0` resumes the rollback",
		v1alpha1.RunAborted:        "`upshift rollback demo-1.1.0`",
		v1alpha1.RunFailed:         "`upshift retry demo-1.1.0`",
		v1alpha1.RunRollbackFailed: "`upshift rollback demo-1.1.0` again",
		v1alpha1.RunRolledBack:     "--retry starts a new attempt",
	} {
		r.Status.Phase = phase
		mustHave(t, runHint(r), want)
	}
	r.Status.Phase = v1alpha1.RunSucceeded
	if h := runHint(r); h != "" {
		t.Errorf("a succeeded run: %q", h)
	}
}

func mustHave(t *testing.T, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%q lacks %q", s, w)
		}
	}
}
