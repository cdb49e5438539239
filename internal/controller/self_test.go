package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestSelfRefusal(t *testing.T) {
	me := self{namespace: "upshift-system", user: "system:serviceaccount:ops:upshift"}
	for _, tc := range []struct {
		name, ns, sa, want string
	}{
		{"a tenant's own ServiceAccount", "team-a", "upgrader", ""},
		{"a tenant's default ServiceAccount", "team-a", "", ""},
		{"in the controller's namespace", "upshift-system", "upgrader", "metadata.namespace: upshift-system is the controller's own namespace"},
		{"the controller's ServiceAccount", "ops", "upshift", "spec.serviceAccountName: system:serviceaccount:ops:upshift is the controller's own ServiceAccount"},
		{"not a ServiceAccount name", "team-a", "B:strong", `spec.serviceAccountName: "B:strong" is not a ServiceAccount name`},
	} {
		got := me.refusal(v1alpha1.PlanKind, tc.ns, tc.sa, "spec.serviceAccountName")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := (self{namespace: "upshift-system"}).refusal(v1alpha1.PlanKind, "ops", "upshift", "spec.serviceAccountName"); got != "" {
		t.Errorf("without knowing its user, a ServiceAccount elsewhere is refused: %q", got)
	}
}

func TestWasApplied(t *testing.T) {
	plan := func(gen, observed int64, run string, phase v1alpha1.RunPhase) *v1alpha1.UpgradePlan {
		return &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Status: v1alpha1.UpgradePlanStatus{ObservedGeneration: observed, Run: run, Phase: phase}}
	}
	for _, tc := range []struct {
		name string
		p    *v1alpha1.UpgradePlan
		want bool
	}{
		{"succeeded at this generation", plan(1, 1, "a.web", v1alpha1.RunSucceeded), true},
		{"rolled back at this generation", plan(1, 1, "a.web", v1alpha1.RunRolledBack), true},
		{"edited since", plan(2, 1, "a.web", v1alpha1.RunSucceeded), false},
		{"stopped for an operator", plan(1, 1, "a.web", v1alpha1.RunFailed), false},
		{"never ran", plan(1, 1, "", v1alpha1.RunPending), false},
	} {
		if got := wasApplied(tc.p); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
