package runner

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/window"
)

// WindowWait stops a drive before a stage that may not start now: no
// window of the plan's spec.windows is open with the stage's estimate
// left. It is an ErrWaiting: the CLI exits 4, and apply later goes on.
type WindowWait struct {
	Stage string
	// Next is when a window long enough opens (zero: none does).
	Next, Closes time.Time
	// Need is the stage's estimate (zero: it never ran, and needs only an
	// open window); From is how many past runs it is the median of.
	Need time.Duration
	From int
}

func (w *WindowWait) Error() string {
	need := "an open window (it has not run before, so it has no estimate)"
	if w.Need > 0 {
		need = fmt.Sprintf("%s left in a window (its median in %d past run(s))", w.Need.Round(time.Second), w.From)
	}
	if w.Next.IsZero() {
		return fmt.Sprintf("waiting: stage %s needs %s, and no window of spec.windows is long enough", w.Stage, need)
	}
	return fmt.Sprintf("waiting: stage %s needs %s; the next window opens at %s (until %s)", w.Stage, need,
		w.Next.UTC().Format(time.RFC3339), w.Closes.UTC().Format(time.RFC3339))
}

func (w *WindowWait) Unwrap() error { return ErrWaiting }

// windowHold is the drive's hold on stages outside the plan's windows
// (nil without windows). The stages' estimates are read from the kept
// runs once, when the first stage is asked about.
func (s *Session) windowHold(ctx context.Context, spec v1alpha1.UpgradePlanSpec) func(*v1alpha1.UpgradeRun, int) error {
	if len(spec.Windows) == 0 {
		return nil
	}
	ws, errs := window.ParseAll(spec.Windows, field.NewPath("spec", "windows"))
	var estimates map[string]stageEstimate
	return func(r *v1alpha1.UpgradeRun, stage int) error {
		if len(errs) > 0 {
			return fmt.Errorf("%w: %v", ErrRefused, errs.ToAggregate())
		}
		if estimates == nil {
			runs, err := s.store.List(ctx)
			if err != nil {
				return fmt.Errorf("read past runs for the stages' estimates: %w", err)
			}
			estimates = stageEstimates(runs)
		}
		name := r.Status.Stages[stage].Name
		return holdStage(ws, name, estimates[name], s.now())
	}
}

// holdStage is a stage's window decision at now: nil when it may start.
func holdStage(ws []*window.Window, stage string, e stageEstimate, now time.Time) error {
	d := window.Decide(ws, now, e.median)
	if d.Start {
		return nil
	}
	return &WindowWait{Stage: stage, Next: d.Next, Closes: d.Closes, Need: e.median, From: e.from}
}
