package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// While a save is in flight the driver goes on recording, and starts what
// changes nothing: held at the save that records stage a's gate begun, it
// still sees the gate pass and starts stage b's backup. A step that writes
// waits until a landed save shows its stage begun: killed before that, a
// rollback would not know the stage changed anything.
func TestDriverOverlapsSavesButNoStepOutrunsItsStagesBegin(t *testing.T) {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "overlap"}}
	p.Spec.Version = "1.1.0"
	for _, name := range []string{"a", "b"} {
		p.Spec.Stages = append(p.Spec.Stages, v1alpha1.Stage{
			Name:  name,
			Steps: []v1alpha1.Step{{Name: "step-" + name}},
			Gates: []v1alpha1.Gate{{HTTP: &v1alpha1.HTTPGate{URL: "http://127.0.0.1/" + name}}},
		})
	}
	r := NewRun(p, "sha256:plan", nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

	var mu sync.Mutex
	var landed []*v1alpha1.UpgradeRun // the saves that landed, in order
	holding := make(chan struct{})    // closed: the held save may land
	held := false
	saver := saverFunc(func(_ context.Context, s *v1alpha1.UpgradeRun) error {
		// Hold the save that records stage a's gate begun.
		if !held && s.Status.Stages[0].Phase == v1alpha1.PhaseGating {
			held = true
			<-holding
		}
		mu.Lock()
		landed = append(landed, s)
		mu.Unlock()
		return nil
	})
	backupB := make(chan struct{})
	var stepStarts []string // problems: a step started before its stage's begin landed
	actor := actorFunc(func(_ context.Context, run *v1alpha1.UpgradeRun, a Action) (Outcome, error) {
		mu.Lock()
		defer mu.Unlock()
		switch a.Kind {
		case Backup:
			if a.Stage == 1 {
				close(backupB)
			}
			return Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}}, nil
		case RunStep:
			if len(landed) == 0 || landed[len(landed)-1].Status.Stages[a.Stage].Phase == v1alpha1.PhasePending {
				stepStarts = append(stepStarts, run.Status.Stages[a.Stage].Name)
			}
		}
		return Outcome{OK: true, Message: "done"}, nil
	})
	done := make(chan error, 1)
	go func() {
		done <- (&Driver{Actor: actor, Saver: saver, Now: time.Now}).Drive(context.Background(), r)
	}()

	select {
	case <-backupB:
	case err := <-done:
		t.Fatalf("the run ended (%v) without stage b's backup", err)
	case <-time.After(10 * time.Second):
		t.Fatal("stage b's backup did not start while the save of stage a's gate was held: the driver waits on each save before it records the next transition")
	}
	close(holding)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end once the save landed")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stepStarts) > 0 {
		t.Errorf("steps of stages %v started while the last landed save showed their stage Pending", stepStarts)
	}
	last := landed[len(landed)-1]
	if r.Status.Phase != v1alpha1.RunSucceeded || last.Status.Phase != v1alpha1.RunSucceeded || last.Status.Transitions != r.Status.Transitions {
		t.Fatalf("run ended %s at transition %d; its last save holds %s at %d", r.Status.Phase, r.Status.Transitions, last.Status.Phase, last.Status.Transitions)
	}
}
