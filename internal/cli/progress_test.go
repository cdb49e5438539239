package cli

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestRenderTreeShowsMarksTimesAndMessages(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.MicroTime { m := metav1.NewMicroTime(start.Add(d)); return &m }
	r := &v1alpha1.UpgradeRun{ObjectMeta: metav1.ObjectMeta{Name: "demo-1.1.0"}}
	r.Spec.Plan.Version = "1.1.0"
	r.Status.Phase = v1alpha1.RunRunning
	r.Status.Stages = []v1alpha1.StageStatus{
		{Name: "crds", Phase: v1alpha1.PhaseSucceeded, StartedAt: at(0), FinishedAt: at(1500 * time.Millisecond),
			Steps: []v1alpha1.StepStatus{{Name: "crds", Phase: v1alpha1.PhaseSucceeded, StartedAt: at(0), FinishedAt: at(time.Second), Message: "3 CRDs established"}}},
		{Name: "data-plane", Phase: v1alpha1.PhaseRunning, StartedAt: at(2 * time.Second),
			Steps: []v1alpha1.StepStatus{{Name: "proxy", Phase: v1alpha1.PhaseRunning, StartedAt: at(2 * time.Second)}, {Name: "gateway", Phase: v1alpha1.PhasePending}}},
		{Name: "gateways", Phase: v1alpha1.PhasePending, Steps: []v1alpha1.StepStatus{{Name: "tenant-a", Phase: v1alpha1.PhasePending}}},
	}
	got := renderTree(r, 0, start.Add(5*time.Second))
	for _, want := range []string{"demo-1.1.0 → 1.1.0  Running", "✔ crds", "1.5s", "3 CRDs established", "⠋ data-plane", "⠋ proxy", "3s", "· gateway", "· gateways"} {
		if !strings.Contains(got, want) {
			t.Errorf("tree lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "tenant-a") {
		t.Errorf("a pending stage's steps are shown:\n%s", got)
	}
}

func TestFitWidthCutsLongLines(t *testing.T) {
	got := fitWidth("short\n"+strings.Repeat("é", 30)+"\n", 10)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if lines[0] != "short" || len([]rune(lines[1])) != 10 || !strings.HasSuffix(lines[1], "…") {
		t.Errorf("fitWidth: %q", got)
	}
}
