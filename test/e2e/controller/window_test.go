package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A plan outside its windows waits, progressing and not stuck, its
// conditions saying when the next window opens; nothing of it starts.
func TestPlanWaitsForItsWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.startController("ctl-window", nil)
	p := e.webPlan("web-2", "2.0", "2.0", "upgrader", false)
	p.Spec.Windows = []v1alpha1.UpgradeWindow{{Schedule: "0 0 1 1 *", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: "Asia/Tokyo"}}
	e.createPlan(p)
	got := e.waitCondition("web-2", v1alpha1.ConditionReconciling, metav1.ConditionTrue, v1alpha1.ReasonWaitingForWindow, time.Minute)
	msg := findCondition(got, v1alpha1.ConditionReconciling).Message
	for _, want := range []string{"stage config needs an open window", "the next window opens at", "-12-31T15:00:00Z"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Reconciling message does not say %q:\n%s", want, msg)
		}
	}
	if c := findCondition(got, v1alpha1.ConditionStalled); c != nil {
		t.Errorf("a plan waiting for its window is Stalled: %+v", c)
	}
	if v := e.webConfig(); v != startVersion {
		t.Errorf("web-config moved to %s outside the window", v)
	}
}
