package apps

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func blueGreenWorld(t *testing.T, bg *v1alpha1.AppBlueGreen) *world {
	spec := v1alpha1.AppRolloutSpec{Version: "v2", UpgradeStrategy: v1alpha1.AppUpgradeStrategy{Type: v1alpha1.StrategyBlueGreen, BlueGreen: bg}}
	w := newWorld(t, spec, 3, "registry.example.com/shop:v1")
	sel := map[string]string{"app": "shop"}
	w.active = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team-a"}, Spec: corev1.ServiceSpec{Selector: sel}}
	w.preview = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shop-preview", Namespace: "team-a"}, Spec: corev1.ServiceSpec{Selector: sel}}
	return w
}

func TestBlueGreenSwitchesThenGoesBackToTheDeployment(t *testing.T) {
	w := blueGreenWorld(t, &v1alpha1.AppBlueGreen{ActiveService: "shop", PreviewService: "shop-preview", AutoPromotionEnabled: ptr.To(false)})
	w.run(4)
	w.wantTrace("Deploying capture", "Deploying set preview", "Deploying none")
	if got := w.active.Spec.Selector; got[LabelPodTemplateHash] != "hash-registry.example.com/shop:v1" || got["app"] != "shop" {
		t.Errorf("active selector before the switch %v: want it pinned to the stable pods", got)
	}
	if got := w.preview.Spec.Selector; got[LabelTrack] != trackPreview || firstImage(w.previewDep) != "registry.example.com/shop:v2" || replicasOf(w.previewDep) != 3 {
		t.Errorf("preview: selector %v, deployment %v", got, w.previewDep)
	}
	w.app.Annotations = map[string]string{v1alpha1.AnnotationPromote: "now"}
	w.run(10)
	w.wantTrace("HealthChecking switch active", "HealthChecking none", "HealthChecking deploy registry.example.com/shop:v2", "Healthy switch back")
	if w.active.Spec.Selector["app"] != "shop" || len(w.active.Spec.Selector) != 1 || w.previewDep != nil || firstImage(w.dep) != "registry.example.com/shop:v2" {
		t.Errorf("after: active %v, preview %v, image %s", w.active.Spec.Selector, w.previewDep, firstImage(w.dep))
	}
}

// A pre-promotion analysis that fails rolls back before the switch: the
// active Service never selected the new pods.
func TestBlueGreenPrePromotionFailureNeverSwitches(t *testing.T) {
	bg := &v1alpha1.AppBlueGreen{ActiveService: "shop", PreviewService: "shop-preview", PrePromotionAnalysis: analysedSpec().UpgradeStrategy.Canary.Analysis}
	bg.PrePromotionAnalysis.Metrics[0].Count = ptr.To[int32](3)
	bg.PrePromotionAnalysis.Metrics[0].Interval = &metav1.Duration{Duration: 10 * time.Second}
	w := blueGreenWorld(t, bg)
	w.value = 0.5
	w.run(10)
	if st := w.app.Status; st.Phase != v1alpha1.AppRolledBack || !strings.Contains(st.Rollback.Reason, "analysis: metric error-rate failed") {
		t.Fatalf("phase %s, rollback %+v", st.Phase, st.Rollback)
	}
	for _, line := range w.trace {
		if strings.Contains(line, "switch active") {
			t.Errorf("switched though the analysis failed:\n%s", strings.Join(w.trace, "\n"))
		}
	}
	if len(w.active.Spec.Selector) != 1 || w.previewDep != nil {
		t.Errorf("not restored: active %v, preview %v", w.active.Spec.Selector, w.previewDep)
	}
}

// An inconclusive post-promotion analysis (HealthChecking) holds the
// rollout; promote is offered and measures it anew, as its message says.
func TestBlueGreenInconclusivePostPromotionIsPromotable(t *testing.T) {
	bg := &v1alpha1.AppBlueGreen{ActiveService: "shop", PreviewService: "shop-preview", PostPromotionAnalysis: analysedSpec().UpgradeStrategy.Canary.Analysis}
	bg.PostPromotionAnalysis.Metrics[0].Count = ptr.To[int32](3)
	bg.PostPromotionAnalysis.Metrics[0].Interval = &metav1.Duration{Duration: 10 * time.Second}
	w := blueGreenWorld(t, bg)
	w.value = 0.1
	w.run(12)
	if st := w.app.Status; st.Phase != v1alpha1.AppHealthChecking || st.Analysis == nil || st.Analysis.Phase != v1alpha1.AnalysisInconclusive {
		t.Fatalf("at 0.1 after the switch: phase %s, analysis %+v", st.Phase, st.Analysis)
	}
	if !slices.Contains(Requests(w.app), RequestPromote) {
		t.Errorf("promote not offered on an inconclusive hold: %v", Requests(w.app))
	}
	w.value = 0.01
	w.app.Annotations = map[string]string{v1alpha1.AnnotationPromote: "1"}
	w.run(30)
	if st := w.app.Status; st.Phase != v1alpha1.AppHealthy || st.Analysis.Phase != v1alpha1.AnalysisSuccessful {
		t.Errorf("after the promotion: phase %s, analysis %+v", st.Phase, st.Analysis)
	}
}
