package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A hold (a closed maintenance window) keeps a stage from beginning: the
// drive stops with the hold's error after the stage before it, with
// nothing of the held stage recorded; driven again once the hold lifts,
// the run goes on from there.
func TestHoldKeepsAStageFromBeginning(t *testing.T) {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	p.Spec.Version = "1.1.0"
	p.Spec.Stages = []v1alpha1.Stage{{Name: "crds", Steps: []v1alpha1.Step{{Name: "crds"}}}, {Name: "app", Steps: []v1alpha1.Step{{Name: "app"}}}}
	now := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	r := NewRun(p, "sha256:plan", nil, now())
	var acted []string
	actor := actorFunc(func(_ context.Context, _ *v1alpha1.UpgradeRun, a Action) (Outcome, error) {
		acted = append(acted, a.String())
		if a.Kind == Backup {
			return Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}}, nil
		}
		return Outcome{OK: true}, nil
	})
	errClosed := errors.New("window closed")
	closed := true
	var asked []int
	d := &Driver{Actor: actor, Saver: saverFunc(func(context.Context, *v1alpha1.UpgradeRun) error { return nil }), Now: now,
		Hold: func(_ *v1alpha1.UpgradeRun, stage int) error {
			asked = append(asked, stage)
			if stage == 1 && closed {
				return errClosed
			}
			return nil
		}}
	if err := d.Drive(context.Background(), r); !errors.Is(err, errClosed) {
		t.Fatalf("Drive = %v, want the hold's error", err)
	}
	if st := r.Status; st.Stages[0].Phase != v1alpha1.PhaseSucceeded || st.Stages[1].Phase != v1alpha1.PhasePending || st.Stages[1].StartedAt != nil || st.Phase != v1alpha1.RunRunning {
		t.Fatalf("after the hold: run %s, stages %s and %s (started %v)", st.Phase, st.Stages[0].Phase, st.Stages[1].Phase, st.Stages[1].StartedAt)
	}
	if len(acted) != 2 {
		t.Errorf("acted %v, want the first stage's backup and step alone", acted)
	}
	closed = false
	if err := d.Drive(context.Background(), r); err != nil || r.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("driven again: %v, run %s", err, r.Status.Phase)
	}
	if want := []int{0, 1, 1}; len(asked) != len(want) || asked[0] != 0 || asked[1] != 1 || asked[2] != 1 {
		t.Errorf("asked about stages %v, want %v: once per stage start", asked, want)
	}
}
