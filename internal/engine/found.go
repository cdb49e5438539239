package engine

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Found is a stage's backup found in the cluster, for the saved run's
// attempt: whole, loading with its checksums, of this run's UID, and
// claimed (a backup saved unclaimed was taken ahead of its stage's turn,
// and no step began with it).
type Found struct {
	Stage  int
	Backup *v1alpha1.BackupRef
}

// Sought names the stages of a saved run whose backup may be in the
// cluster and not in the record: a process may have taken it, started the
// stage's steps while the record of it was being saved (Driver), and died
// before that save landed. They are every stage saved as backing up, and
// the first stage saved as pending (a backup that landed within the quick
// window is saved with its step's start, not before). As soon as it holds
// a saved run, before a command changes it or it is driven, a driver
// looks for these stages' backups and hands what it found to Reconcile:
// a rollback decided without a found backup would not restore its stage.
// A run that was just created or started a new attempt has none.
func Sought(r *v1alpha1.UpgradeRun) []int {
	var out []int
	for i, ss := range r.Status.Stages {
		switch {
		case ss.Backup != nil:
		case ss.Phase == v1alpha1.PhaseBackingUp:
			out = append(out, i)
		case ss.Phase == v1alpha1.PhasePending:
			return append(out, i)
		}
	}
	return out
}

// Reconcile records in a saved run the backups found for it in the
// cluster (found, for the stages Sought named), and returns those it
// recorded. It is the one place a resumed run learns what a stopped
// process did and did not live to save; it changes the record, never the
// cluster, and the caller saves it with the next transition.
//
// A found backup is the stage's: going on, the stage takes no other (a
// new one could hold what its steps changed), and a rollback restores it.
// The steps that start with it are recorded as begun (mayHaveStarted).
// Found for a stage saved as pending, it also tells that every stage
// before it succeeded: a stage is backed up only once every stage before
// it did, and the driver had recorded, not yet saved, their ends with it.
// Those stages are recorded as succeeded at now, so that going on runs
// none of their steps or gates again after the found stage's steps may
// have changed the platform.
//
// A found backup of a stage the record already holds one for, or of a
// stage Sought did not name, is ignored: the record is the truth where it
// speaks.
func Reconcile(r *v1alpha1.UpgradeRun, found []Found, now time.Time) []Found {
	byStage := map[int]*v1alpha1.BackupRef{}
	for _, f := range found {
		if f.Backup != nil {
			byStage[f.Stage] = f.Backup
		}
	}
	var adopted []Found
	for _, i := range Sought(r) {
		ref, ok := byStage[i]
		if !ok {
			continue
		}
		adopt(r, i, ref, now)
		adopted = append(adopted, Found{Stage: i, Backup: ref})
	}
	return adopted
}

// adopt records ref as stage's backup, taken before the run stopped.
func adopt(r *v1alpha1.UpgradeRun, stage int, ref *v1alpha1.BackupRef, now time.Time) {
	st := &r.Status
	st.Transitions++
	ss := &st.Stages[stage]
	if ss.Phase == v1alpha1.PhasePending {
		t := metav1.NewMicroTime(now)
		for i := range stage {
			succeededBefore(&st.Stages[i], &t)
		}
	}
	ss.Backup = ref
	ss.Phase = v1alpha1.PhaseRunning
	ss.Message = "backup found in the cluster: taken before the run stopped"
	mayHaveStarted(r, stage, now)
	locate(r)
}

// mayHaveStarted records as begun the steps of stage that start with its
// backup: the driver may have started them while the backup's record was
// being saved. Going on enters them again, as any step begun and not
// finished; a rollback undoes them as it does a step whose Begin was
// saved (a Helm release rolled back, a down-migration run), which it
// skips for a step never begun.
func mayHaveStarted(r *v1alpha1.UpgradeRun, stage int, now time.Time) {
	t := metav1.NewMicroTime(now)
	forward := *r // the steps a running run starts, whatever its phase now
	forward.Status.Phase = v1alpha1.RunRunning
	for _, a := range NextActions(&forward) {
		if a.Kind != RunStep || a.Stage != stage {
			continue
		}
		st := &r.Status.Stages[stage].Steps[a.Index]
		begin(st, &t)
		st.Message = "may have started before the run stopped"
	}
}

// succeededBefore records a stage that a stopped process finished, as
// the next stage's backup shows, whose end it did not live to save.
func succeededBefore(ss *v1alpha1.StageStatus, t *metav1.MicroTime) {
	if ss.Phase == v1alpha1.PhaseSucceeded {
		return
	}
	const msg = "succeeded before the run stopped: the next stage's backup was taken"
	for _, list := range [][]v1alpha1.StepStatus{ss.Steps, ss.Gates} {
		for j := range list {
			if s := &list[j]; s.Phase != v1alpha1.PhaseSucceeded && s.Phase != v1alpha1.PhaseWarned {
				s.Phase = v1alpha1.PhaseSucceeded
				s.FinishedAt = t
				s.Message = msg
			}
		}
	}
	ss.Phase = v1alpha1.PhaseSucceeded
	ss.FinishedAt = t
	ss.Message = ""
}
