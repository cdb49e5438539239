package engine

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// world is the cluster as the fake actor changes it: which steps changed
// the platform (and were not put back), and the backups taken, each
// knowing whether it holds its stage's changes. It outlives a killed
// process, as a cluster does; a resumed run learns of it only through
// Reconcile, fed by found.
//
// A restore from a clean backup undoes the steps of its stage that the
// record shows begun, as the runner's does: objects come back from the
// snapshot, but a Helm release is rolled back, and a down-migration run,
// only for a step recorded as begun.
type world struct {
	mu      sync.Mutex
	changed map[string]bool        // "stage/step" → its change is in the platform
	backups map[string]worldBackup // attemptStage → the backup taken
	log     []done                 // the IO done since drain
	// furthest is, per attempt, the last stage whose steps changed the
	// platform; late lists the steps and gates that ran after it on a
	// stage before it, against the plan's order.
	furthest map[int]int
	late     []string
}

// done is an action whose IO the world saw.
type done struct {
	key string
	a   Action
}

// worldBackup is a backup as it was taken: dirty when a step of its stage
// had already changed the platform, so restoring it would not undo them.
type worldBackup struct {
	ref   *v1alpha1.BackupRef
	dirty bool
}

func newWorld() *world {
	return &world{changed: map[string]bool{}, backups: map[string]worldBackup{}, furthest: map[int]int{}}
}

func attemptStage(r *v1alpha1.UpgradeRun, stage int) string {
	return fmt.Sprintf("%d/%s", r.Status.Attempt, r.Spec.Plan.Stages[stage].Name)
}

// act does an action's IO: a backup is taken of the stage as it is now,
// a step changes its stage (before it reports a failure too: a failing
// step may have written), a restore puts back what its backup holds.
func (w *world) act(r *v1alpha1.UpgradeRun, a Action, key string, ref *v1alpha1.BackupRef, restoreOK bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	stage := r.Spec.Plan.Stages[a.Stage].Name
	if f, ok := w.furthest[r.Status.Attempt]; ok && (a.Kind == RunStep || a.Kind == CheckGate) && a.Stage < f {
		w.late = append(w.late, fmt.Sprintf("%s ran after the steps of stage %s changed the platform", key, r.Spec.Plan.Stages[f].Name))
	}
	switch a.Kind {
	case Backup:
		if ref != nil {
			w.backups[attemptStage(r, a.Stage)] = worldBackup{ref: ref, dirty: w.stageChanged(stage)}
		}
	case RunStep:
		if step := r.Spec.Plan.Stages[a.Stage].Steps[a.Index]; step.Approval == nil {
			w.changed[stage+"/"+step.Name] = true
			w.furthest[r.Status.Attempt] = max(w.furthest[r.Status.Attempt], a.Stage)
		}
	case Restore:
		if b, ok := w.backups[attemptStage(r, a.Stage)]; ok && restoreOK && !b.dirty {
			for j, st := range r.Status.Stages[a.Stage].Steps {
				if st.Attempts > 0 {
					delete(w.changed, stage+"/"+r.Spec.Plan.Stages[a.Stage].Steps[j].Name)
				}
			}
		}
	case CheckGate:
		return // reads only
	}
	w.log = append(w.log, done{key: key, a: a})
}

// stageChanged tells whether a step of stage changed the platform.
func (w *world) stageChanged(stage string) bool {
	for k, c := range w.changed {
		if c && strings.HasPrefix(k, stage+"/") {
			return true
		}
	}
	return false
}

// found is what a resumed process finds in the cluster for the stages
// Sought names: the backups of the run's attempt.
func (w *world) found(r *v1alpha1.UpgradeRun) []Found {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Found
	for _, i := range Sought(r) {
		if b, ok := w.backups[attemptStage(r, i)]; ok {
			out = append(out, Found{Stage: i, Backup: b.ref})
		}
	}
	return out
}

// drain forgets the IO done so far.
func (w *world) drain() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = nil
}

// unsaved names the IO done since drain whose end the saved record does
// not hold: what a process did and did not live to save. Sorted: actions
// started side by side land in any order.
func (w *world) unsaved(saved *v1alpha1.UpgradeRun) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, d := range w.log {
		ss := saved.Status.Stages[d.a.Stage]
		switch {
		case d.a.Kind == Backup && ss.Backup != nil,
			d.a.Kind == RunStep && ss.Steps[d.a.Index].FinishedAt != nil,
			d.a.Kind == Restore && (ss.Phase == v1alpha1.PhaseRolledBack || ss.Phase == v1alpha1.PhaseRollbackErr):
			continue
		}
		out = append(out, d.key)
	}
	sort.Strings(out)
	return out
}

// violations says where the run, as it ended, left the world unsafe: a
// step or gate that ran against the plan's order, a recorded backup that
// holds its stage's changes (a rollback from it would not undo them), or
// a rolled-back run whose stages are not all put back.
func (w *world) violations(r *v1alpha1.UpgradeRun) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	bad := append([]string(nil), w.late...)
	for i, ss := range r.Status.Stages {
		if ss.Backup == nil {
			continue
		}
		if b, ok := w.backups[attemptStage(r, i)]; ok && b.dirty {
			bad = append(bad, fmt.Sprintf("the backup of stage %s was taken after its steps changed the platform", ss.Name))
		}
	}
	if r.Status.Phase == v1alpha1.RunRolledBack {
		var left []string
		for step, c := range w.changed {
			if c {
				left = append(left, step)
			}
		}
		sort.Strings(left)
		if len(left) > 0 {
			bad = append(bad, "rolled back, but steps "+strings.Join(left, ", ")+" are still in the platform")
		}
	}
	return bad
}
