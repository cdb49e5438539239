package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A plan whose ServiceAccount lacks a verb it needs is refused before any
// write, and the condition names the missing permission.
func TestPlanWithoutRightsIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("weak", "get", "list", "watch") // deployments: no patch, no update
	e.startController("ctl-rights", nil)
	e.createPlan(e.webPlan("web-2", "2.0", "2.0", "weak", false))

	p := e.waitCondition("web-2", v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonPreflightFailed, time.Minute)
	c := findCondition(p, v1alpha1.ConditionStalled)
	for _, want := range []string{"system:serviceaccount:" + e.ns + ":weak", "deployments", "nothing was changed"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Stalled message does not say %q:\n%s", want, c.Message)
		}
	}
	if !contains(e.events("web-2"), "Warning PreflightFailed: as system:serviceaccount:"+e.ns+":weak") {
		t.Errorf("no PreflightFailed event naming the ServiceAccount: %v", e.events("web-2"))
	}
	if r := findCondition(p, v1alpha1.ConditionReady); r == nil || r.Reason != v1alpha1.ReasonPreflightFailed {
		t.Errorf("Ready: %+v, want False PreflightFailed", r)
	}
	for _, w := range changes(e.writesBy("ctl-rights", e.ns)) {
		if !strings.HasPrefix(w, "patch upgradeplans/status ") {
			t.Errorf("the controller wrote %s for a refused plan", w)
		}
	}
	if got := e.webConfig(); got != startVersion {
		t.Errorf("web-config changed to %s by a refused plan", got)
	}
}

// A plan that names a file cannot run in the cluster: refused with the
// field path, and tried again only when edited.
func TestPlanWithAFileIsInvalid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("upgrader")
	e.startController("ctl-invalid", nil)
	p := e.webPlan("web-2", "2.0", "2.0", "upgrader", false)
	p.Spec.Stages[0].Steps[0].Manifests.Source = v1alpha1.Source{Path: "config/"}
	e.createPlan(p)
	got := e.waitCondition("web-2", v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonInvalid, time.Minute)
	if c := findCondition(got, v1alpha1.ConditionStalled); !strings.Contains(c.Message, "spec.stages[0].steps[0].manifests.path") {
		t.Errorf("Stalled does not name the field: %s", c.Message)
	}
}
