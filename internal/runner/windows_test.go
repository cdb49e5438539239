package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/window"
)

// A stage starts in an open window only with its estimate left; one
// that would not fit waits for the next window long enough, and says so.
func TestHoldStageWeighsTheEstimate(t *testing.T) {
	ws, errs := window.ParseAll([]v1alpha1.UpgradeWindow{{Schedule: "0 2 * * *", Duration: metav1.Duration{Duration: time.Hour}}}, field.NewPath("spec", "windows"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 29, hh, mm, 0, 0, time.UTC) }
	run := func(took ...time.Duration) v1alpha1.UpgradeRun {
		var r v1alpha1.UpgradeRun
		for _, d := range took {
			start := metav1.NewMicroTime(at(2, 0))
			end := metav1.NewMicroTime(start.Add(d))
			r.Status.Stages = append(r.Status.Stages, v1alpha1.StageStatus{Name: "database", Phase: v1alpha1.PhaseSucceeded, StartedAt: &start, FinishedAt: &end})
		}
		return r
	}
	est := stageEstimates([]v1alpha1.UpgradeRun{run(20 * time.Minute), run(40 * time.Minute), run(30 * time.Minute)})["database"]
	if est.median != 30*time.Minute || est.from != 3 {
		t.Fatalf("estimate %+v, want the median 30m of 3", est)
	}
	if err := holdStage(ws, "database", est, at(2, 10)); err != nil {
		t.Errorf("at 02:10 with 50m left: %v, want a start", err)
	}
	err := holdStage(ws, "database", est, at(2, 40))
	var ww *WindowWait
	if !errors.As(err, &ww) || !errors.Is(err, ErrWaiting) || !ww.Next.Equal(at(2, 0).Add(24*time.Hour)) {
		t.Fatalf("at 02:40 with 20m left for 30m: %v, want a wait for tomorrow's window", err)
	}
	for _, want := range []string{"stage database needs 30m0s left in a window (its median in 3 past run(s))", "the next window opens at 2026-11-30T02:00:00Z (until 2026-11-30T03:00:00Z)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if err := holdStage(ws, "fresh", stageEstimate{}, at(2, 59)); err != nil {
		t.Errorf("a stage with no estimate in an open window: %v, want a start", err)
	}
	if err := holdStage(ws, "long", stageEstimate{median: 2 * time.Hour, from: 1}, at(1, 0)); err == nil || !strings.Contains(err.Error(), "no window of spec.windows is long enough") {
		t.Errorf("a stage longer than any window: %v", err)
	}
}
