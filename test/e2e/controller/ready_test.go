package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A plan resource runs to Ready as its ServiceAccount; kubectl shows the
// columns, events tell the story, metrics move.
func TestPlanRunsToReady(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	ctl := e.startController("ctl-ready", nil)
	scraper := e.metricsToken()
	before := e.scrape(ctl, scraper)

	e.createPlan(e.webPlan("web-2", "2.0", "2.0", "upgrader", false))
	p := e.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)

	if got := e.webImage(); got != "example.com/web:2.0" {
		t.Errorf("web's image is %s, want example.com/web:2.0", got)
	}
	if got := e.webConfig(); got != "2.0" {
		t.Errorf("web-config's version is %s, want 2.0", got)
	}
	if p.Status.Phase != v1alpha1.RunSucceeded || p.Status.Run != e.ns+".web-2" || p.Status.Version != "2.0" {
		t.Errorf("status phase %s, run %s, version %s; want Succeeded, %s.web-2, 2.0", p.Status.Phase, p.Status.Run, p.Status.Version, e.ns)
	}
	for _, c := range []string{v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled} {
		if cond := findCondition(p, c); cond != nil {
			t.Errorf("condition %s present on a succeeded plan: %+v", c, cond)
		}
	}

	out, err := e.kubectl("get", "upgradeplans", "-n", e.ns)
	if err != nil || !strings.Contains(out, "VERSION") || !strings.Contains(out, "PHASE") || !strings.Contains(out, "STAGE") || !strings.Contains(out, "Succeeded") {
		t.Errorf("kubectl get upgradeplans: %v\n%s", err, out)
	}
	events := e.events("web-2")
	for _, want := range []string{"Normal RunStarted", "Normal StageSucceeded: stage config succeeded", "Normal StageSucceeded: stage app succeeded", "Normal Succeeded"} {
		if !contains(events, want) {
			t.Errorf("no event %q in:\n%s", want, strings.Join(events, "\n"))
		}
	}

	after := e.scrape(ctl, scraper)
	if before.value(`upshift_runs{phase="Succeeded"}`) != 0 || after.value(`upshift_runs{phase="Succeeded"}`) != 1 {
		t.Errorf("upshift_runs{phase=Succeeded}: %v before, %v after; want 0, 1", before.value(`upshift_runs{phase="Succeeded"}`), after.value(`upshift_runs{phase="Succeeded"}`))
	}
	if n := after.value(`upshift_transitions_total{action="step",event="succeeded"}`); n != 2 {
		t.Errorf("upshift_transitions_total of succeeded steps: %v, want 2", n)
	}
	if n := after.value(`upshift_step_duration_seconds_count{kind="image",outcome="succeeded"}`); n != 1 {
		t.Errorf("image step durations observed: %v, want 1", n)
	}
}

func findCondition(p *v1alpha1.UpgradePlan, typ string) *metav1.Condition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
