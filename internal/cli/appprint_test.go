package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestPrintAppDrawsItsSteps(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	a := &v1alpha1.AppRollout{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team-a", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec: v1alpha1.AppRolloutSpec{Version: "v2", UpgradeStrategy: v1alpha1.AppUpgradeStrategy{
			Type:   v1alpha1.StrategyCanary,
			Canary: &v1alpha1.AppCanary{Enabled: true, Steps: []v1alpha1.AppCanaryStep{{Weight: 10, Pause: 300}, {Weight: 50, Pause: 300}, {Weight: 100}}},
		}},
		Status: v1alpha1.AppRolloutStatus{
			Phase: v1alpha1.AppDeploying, CurrentVersion: "v1", TargetVersion: "v2", Attempt: 1,
			CanaryStep: 1, CanaryWeight: 50, PauseStartedAt: &metav1.Time{Time: now.Add(-time.Minute)},
			StableImage: "registry.example.com/shop:v1", Replicas: 10,
			Analysis: &v1alpha1.AppAnalysisStatus{Phase: v1alpha1.AnalysisRunning, StartedAt: metav1.NewTime(now.Add(-2 * time.Minute)), Metrics: []v1alpha1.MetricResult{{
				Name: "error-rate", Phase: v1alpha1.AnalysisRunning, Count: 3, Successful: 2, Inconclusive: 1,
				Measurements: []v1alpha1.Measurement{{Value: "[0.01]", Phase: v1alpha1.AnalysisSuccessful}, {Value: "[0.02]", Phase: v1alpha1.AnalysisSuccessful}, {Value: "[0.1]", Phase: v1alpha1.AnalysisInconclusive}},
			}}},
		},
	}
	var b bytes.Buffer
	printApp(&b, a, now)
	for _, want := range []string{
		"approllout team-a/shop: Deploying",
		"version   v1 → v2 (Canary, attempt 1)",
		"steps     10% 300s ✓ → [50% 300s: holding, 4m left] → 100%",
		"analysis  Running since 2026-11-29T08:58:00Z",
		"error-rate: Running, 3 measured, 0 failed, 1 inconclusive, 0 errors; last: [0.01] [0.02] [0.1](Inconclusive)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("printApp does not show %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	printAppList(&b, []v1alpha1.AppRollout{*a}, false, now)
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "2/3 50%") || !strings.Contains(lines[1], "60m") {
		t.Errorf("printAppList:\n%s", b.String())
	}
}
