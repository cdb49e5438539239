package v1alpha1_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// AddToScheme registers both kinds and their lists under upshift.dev/v1alpha1,
// as a client or a controller-runtime manager needs them.
func TestAddToSchemeRegistersKinds(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for kind, obj := range map[string]runtime.Object{
		"UpgradePlan":         &v1alpha1.UpgradePlan{},
		"UpgradePlanList":     &v1alpha1.UpgradePlanList{},
		"UpgradeRun":          &v1alpha1.UpgradeRun{},
		"UpgradeRunList":      &v1alpha1.UpgradeRunList{},
		"PlatformUpgrade":     &v1alpha1.PlatformUpgrade{},
		"PlatformUpgradeList": &v1alpha1.PlatformUpgradeList{},
	} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil || len(gvks) != 1 || gvks[0] != v1alpha1.GroupVersion.WithKind(kind) {
			t.Errorf("%T: kinds %v (%v), want %s", obj, gvks, err, v1alpha1.GroupVersion.WithKind(kind))
		}
	}
	if v1alpha1.GroupVersion.String() != v1alpha1.APIVersion {
		t.Errorf("GroupVersion %s, want %s", v1alpha1.GroupVersion, v1alpha1.APIVersion)
	}
}

// DeepCopy shares nothing with the original: a controller may change its
// copy of a cached object.
func TestDeepCopySharesNothing(t *testing.T) {
	p := &v1alpha1.UpgradePlan{
		Spec: v1alpha1.UpgradePlanSpec{Version: "1.1.0", Stages: []v1alpha1.Stage{{
			Name:  "crds",
			Steps: []v1alpha1.Step{{Name: "crds", Timeout: &metav1.Duration{}, CRDs: &v1alpha1.CRDsStep{}}},
		}}},
		Status: v1alpha1.UpgradePlanStatus{Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady}}},
	}
	cp := p.DeepCopyObject().(*v1alpha1.UpgradePlan)
	cp.Spec.Stages[0].Steps[0].Name = "changed"
	cp.Spec.Stages[0].Steps[0].Timeout.Duration = 1
	cp.Status.Conditions[0].Type = "changed"
	if p.Spec.Stages[0].Steps[0].Name != "crds" || p.Spec.Stages[0].Steps[0].Timeout.Duration != 0 || p.Status.Conditions[0].Type != v1alpha1.ConditionReady {
		t.Errorf("changing the copy changed the original: %+v", p)
	}
}
