package engine

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// savedGateStates drives a one-stage plan (a step, then two gates that
// take gateTakes each) and returns, for every save, the phases of the
// step and the gates it held.
func savedGateStates(t *testing.T, window, gateTakes time.Duration) [][3]v1alpha1.Phase {
	t.Helper()
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	p.Spec.Version = "1.1.0"
	p.Spec.Stages = []v1alpha1.Stage{{
		Name:  "control-plane",
		Steps: []v1alpha1.Step{{Name: "manager"}},
		Gates: []v1alpha1.Gate{
			{HTTP: &v1alpha1.HTTPGate{URL: "http://127.0.0.1/0"}},
			{HTTP: &v1alpha1.HTTPGate{URL: "http://127.0.0.1/1"}},
		},
	}}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	r := NewRun(p, "sha256:plan", nil, now())
	var saves [][3]v1alpha1.Phase
	actor := actorFunc(func(_ context.Context, _ *v1alpha1.UpgradeRun, a Action) (Outcome, error) {
		switch a.Kind {
		case Backup:
			return Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}}, nil
		case CheckGate:
			time.Sleep(gateTakes)
		}
		return Outcome{OK: true}, nil
	})
	saver := saverFunc(func(_ context.Context, r *v1alpha1.UpgradeRun) error {
		ss := r.Status.Stages[0]
		saves = append(saves, [3]v1alpha1.Phase{ss.Steps[0].Phase, ss.Gates[0].Phase, ss.Gates[1].Phase})
		return nil
	})
	d := &Driver{Actor: actor, Saver: saver, Now: now, QuickWindow: window}
	if err := d.Drive(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if r.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("run %s, want Succeeded", r.Status.Phase)
	}
	return saves
}

// A gate quicker than the window lands before the step's completion is
// saved: one write carries the step's outcome and both gates'.
func TestQuickGatesAreSavedWithTheStepsOutcome(t *testing.T) {
	saves := savedGateStates(t, 10*time.Second, 0) // a window no scheduling delay outlasts
	for _, s := range saves {
		if s[0] == v1alpha1.PhaseSucceeded && s[1] != v1alpha1.PhaseSucceeded {
			t.Fatalf("saves %v: the step's completion was saved before its quick gate landed", saves)
		}
	}
	last := saves[len(saves)-1]
	if last != [3]v1alpha1.Phase{v1alpha1.PhaseSucceeded, v1alpha1.PhaseSucceeded, v1alpha1.PhaseSucceeded} {
		t.Fatalf("last save %v, want all Succeeded", last)
	}
}

// A gate slower than the window does not hold the step's completion back
// for its whole length: it is saved while the gate runs. (This bounds the
// wait; a driver that never waits passes it too.)
func TestSlowGateDoesNotHoldTheStepsOutcomeBack(t *testing.T) {
	saves := savedGateStates(t, 50*time.Millisecond, time.Second)
	for _, s := range saves {
		if s[0] == v1alpha1.PhaseSucceeded && s[1] == v1alpha1.PhaseRunning {
			return
		}
	}
	t.Fatalf("saves %v: none shows the step done while its slow gate runs", saves)
}
