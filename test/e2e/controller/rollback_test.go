package controller_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A broken plan (its image crash-loops on the fake kubelet) fails its
// gate, rolls back both stages and says why, with the failing pod, in an
// event; the objects come back equal to what they were.
func TestBrokenPlanRollsBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	deployBefore, err := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cmBefore, err := e.cs.CoreV1().ConfigMaps(e.ns).Get(e.ctx, "web-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.startController("ctl-rollback", nil)

	e.createPlan(e.webPlan("web-broken", "2.0", "2.0-broken", "upgrader", false))
	p := e.waitCondition("web-broken", v1alpha1.ConditionRolledBack, metav1.ConditionTrue, v1alpha1.ReasonRolledBack, 3*time.Minute)

	if c := findCondition(p, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRolledBack {
		t.Errorf("Ready: %+v, want False RolledBack", c)
	}
	if c := findCondition(p, v1alpha1.ConditionStalled); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Stalled: %+v, want True: only a person moves a rolled-back plan on", c)
	}
	deployAfter, err := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(deployBefore.Spec, deployAfter.Spec); d != "" {
		t.Errorf("web's spec after the rollback differs from before (-before +after):\n%s", d)
	}
	cmAfter, err := e.cs.CoreV1().ConfigMaps(e.ns).Get(e.ctx, "web-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(cmBefore.Data, cmAfter.Data); d != "" {
		t.Errorf("web-config after the rollback differs from before (-before +after):\n%s", d)
	}

	events := e.events("web-broken")
	var failure string
	for _, ev := range events {
		if strings.HasPrefix(ev, "Warning GateFailed") || strings.HasPrefix(ev, "Warning StepFailed") {
			failure = ev
		}
	}
	if !strings.Contains(failure, "pod "+e.ns+"/web-") || !strings.Contains(failure, "CrashLoopBackOff") {
		t.Errorf("no failure event naming the crash-looping pod; events:\n%s", strings.Join(events, "\n"))
	}
	// The fake kubelet serves every container the same log line.
	if !strings.Contains(failure, "last log lines of pod "+e.ns+"/web-") || !strings.Contains(failure, "this container runs on a kwok fake node") {
		t.Errorf("the failure event lacks the crashed container's log tail:\n%s", failure)
	}
	for _, want := range []string{"Normal StageRestored: stage app restored", "Normal StageRestored: stage config restored", "Warning RolledBack"} {
		if !contains(events, want) {
			t.Errorf("no event %q in:\n%s", want, strings.Join(events, "\n"))
		}
	}
}
