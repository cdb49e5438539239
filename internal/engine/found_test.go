package engine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A rollback restores a stage whose backup was found in the cluster after
// its run stopped backing it up, last stage first, and then the earlier.
func TestAdoptedBackupIsRestoredFirst(t *testing.T) {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	p.Spec.Version = "1.1.0"
	p.Spec.Stages = []v1alpha1.Stage{{Name: "crds", Steps: []v1alpha1.Step{{Name: "crds"}}}, {Name: "workloads", Steps: []v1alpha1.Step{{Name: "web"}}}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewRun(p, "sha256:plan", nil, now)
	ok := func(a Action, o Outcome) {
		Begin(r, a, now)
		Complete(r, a, o, now)
	}
	taken := Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}}
	ok(Action{Kind: Backup, Stage: 0}, taken)
	ok(Action{Kind: RunStep, Stage: 0}, Outcome{OK: true})
	Begin(r, Action{Kind: Backup, Stage: 1}, now) // the process stops here, as saved
	if err := RequestRollback(r, "an operator", now); err != nil {
		t.Fatal(err)
	}
	if a := Next(r); a.Kind != Restore || a.Stage != 0 {
		t.Fatalf("before the adoption: next %s, want the restore of stage 0 (stage 1 has no backup)", a)
	}
	before := r.Status.Transitions
	if got := Sought(r); len(got) != 1 || got[0] != 1 {
		t.Fatalf("sought %v, want stage 1 (saved as backing up)", got)
	}
	found := []Found{{Stage: 0, Backup: &v1alpha1.BackupRef{Secrets: []string{"stale"}}}, {Stage: 1, Backup: &v1alpha1.BackupRef{Secrets: []string{"found"}, Objects: 1}}}
	if adopted := Reconcile(r, found, now); len(adopted) != 1 || adopted[0].Stage != 1 {
		t.Fatalf("adopted %v, want stage 1 alone (stage 0's backup is in the record)", adopted)
	}
	if got := r.Status.Stages[0].Backup.Secrets[0]; got != "b" {
		t.Errorf("stage 0's backup is %s: the record's must stay", got)
	}
	if a := Next(r); a.Kind != Restore || a.Stage != 1 {
		t.Fatalf("after the adoption: next %s, want the restore of stage 1", a)
	}
	if r.Status.Transitions != before+1 {
		t.Errorf("transitions %d, want %d: the adoption is a transition to save", r.Status.Transitions, before+1)
	}
	ok(Action{Kind: Restore, Stage: 1}, Outcome{OK: true, Rollback: &v1alpha1.Rollback{Restored: 1}})
	if a := Next(r); a.Kind != Restore || a.Stage != 0 {
		t.Fatalf("after restoring stage 1: next %s, want the restore of stage 0", a)
	}
}

// A backup that landed within the driver's quick window lets its stage's
// step start before the ends of the stage before it are saved: found in
// the cluster for a stage saved as pending, it tells that the stages
// before it succeeded, and going on runs none of their steps or gates
// again (they would run after the stage's step changed the platform).
func TestAdoptedBackupOfAPendingStageEndsTheStagesBefore(t *testing.T) {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	p.Spec.Version = "1.1.0"
	p.Spec.Stages = []v1alpha1.Stage{
		{Name: "web", Steps: []v1alpha1.Step{{Name: "web"}}, Gates: []v1alpha1.Gate{{Soak: &v1alpha1.SoakGate{}}}},
		{Name: "agent", Steps: []v1alpha1.Step{{Name: "agent"}}},
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewRun(p, "sha256:plan", nil, now)
	Begin(r, Action{Kind: Backup, Stage: 0}, now)
	Complete(r, Action{Kind: Backup, Stage: 0}, Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}}, now)
	Begin(r, Action{Kind: RunStep, Stage: 0}, now) // saved; what follows was not
	if got := Sought(r); len(got) != 1 || got[0] != 1 {
		t.Fatalf("sought %v, want stage 1 (the first pending)", got)
	}
	Reconcile(r, []Found{{Stage: 1, Backup: &v1alpha1.BackupRef{Secrets: []string{"found"}, Objects: 1}}}, now.Add(time.Minute))
	if a := Next(r); a.Kind != RunStep || a.Stage != 1 {
		t.Fatalf("after the adoption: next %s, want agent's step (web's step and gate ran before the stop)", a)
	}
	web := r.Status.Stages[0]
	if web.Phase != v1alpha1.PhaseSucceeded || web.Steps[0].Phase != v1alpha1.PhaseSucceeded || web.Gates[0].Phase != v1alpha1.PhaseSucceeded {
		t.Errorf("stage web is %s (step %s, gate %s): want it all succeeded", web.Phase, web.Steps[0].Phase, web.Gates[0].Phase)
	}
	if r.Status.Stage != "agent" {
		t.Errorf("the run is at stage %q, want agent", r.Status.Stage)
	}
}
