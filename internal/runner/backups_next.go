package runner

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
)

// nextBackup is the backup of the stage after a Confined one, taken
// while that one's steps run (image steps rolling out, CRDs being
// established): between two stages of a sequential plan, reading,
// writing and reading back the next stage's backup would otherwise be the
// longest wait between a rollout's end and the next change.
//
// It is saved unclaimed (backup.Client.SaveUnclaimed): until its stage's
// turn confirms it and claims it, a resumed run does not adopt it, and a
// Save of the stage writes over it. At that turn, the run's informers or
// else one read of metadata tell whether every object it holds is still
// at the version it holds (backup.Client.Unmoved); if so it is claimed
// and is the stage's backup, as good as one read then. If not, or if
// anything about it failed, the stage takes its backup as usual.
type nextBackup struct {
	run     string // the run's UID
	attempt int
	stage   int    // the stage it is the backup of
	during  string // the stage it was taken while, for the message
	done    chan struct{}
	// Set once done is closed; ref is valid when err is nil.
	snap *backup.Snapshot
	ref  v1alpha1.BackupRef
	err  error
}

// nextBackupFits tells whether the stage after stage may be backed up
// while stage's steps run, as their kinds declare (step.Traits): every
// step of stage is Confined (it changes nothing but its targets and its
// Reach), and every step of the next stage NamesUpFront (its objects
// known before anything runs, nothing kept besides them, as a Helm
// release's revision is). The objects themselves are compared once their
// Targets are known (disjoint).
func nextBackupFits(stages []v1alpha1.Stage, stage int) bool {
	if stage+1 >= len(stages) || len(stages[stage].Steps) == 0 {
		return false
	}
	for _, s := range stages[stage].Steps {
		if !steps.TraitsOf(s).Confined {
			return false
		}
	}
	for _, s := range stages[stage+1].Steps {
		if !steps.TraitsOf(s).NamesUpFront {
			return false
		}
	}
	return true
}

// disjoint tells whether the next stage's objects (next) are none of
// stage's (these) and nothing else stage changes (its reach: kinds its
// controllers write, groups whose serving it changes).
func disjoint(these, next []step.Ref, reach step.Reach) bool {
	mine := map[string]bool{}
	for _, t := range these {
		mine[refKey(t)] = true
	}
	kinds := map[schema.GroupKind]bool{}
	for _, k := range reach.Kinds {
		kinds[k] = true
	}
	groups := map[string]bool{}
	for _, g := range reach.Groups {
		groups[g] = true
	}
	for _, n := range next {
		gk := n.GroupVersionKind().GroupKind()
		if mine[refKey(n)] || kinds[gk] || groups[gk.Group] {
			return false
		}
	}
	return true
}

func refKey(r step.Ref) string {
	return r.GroupVersionKind().GroupKind().String() + "/" + r.Namespace + "/" + r.Name
}

// startNext starts taking the backup of the stage after stage, when it
// fits (nextBackupFits, disjoint) and none is taken or being taken for
// it. It ends with ctx: the step's, so a backup not saved by the end of
// the step is dropped (its stage takes one as usual).
func (b *stageBackups) startNext(ctx context.Context, r *v1alpha1.UpgradeRun, stages []v1alpha1.Stage, stage int) {
	if !nextBackupFits(stages, stage) {
		return
	}
	if next := r.Status.Stages[stage+1]; next.Phase != v1alpha1.PhasePending || next.Backup != nil {
		return // begun already (a step re-run after a resume): its backup stands
	}
	nb := &nextBackup{run: string(r.UID), attempt: r.Status.Attempt, stage: stage + 1, during: stages[stage].Name, done: make(chan struct{})}
	for {
		cur := b.next.Load()
		if cur != nil && cur.run == nb.run && cur.attempt == nb.attempt && cur.stage == nb.stage && !cur.failed() {
			return // a step of the same stage started it
		}
		if b.next.CompareAndSwap(cur, nb) {
			break
		}
	}
	go func() {
		defer close(nb.done)
		nb.snap, nb.ref, nb.err = b.takeNext(ctx, r, stage)
	}()
}

// failed tells whether the next backup ended without one (cut short by
// the end of the step that started it, say): another step of the stage
// may start it again.
func (nb *nextBackup) failed() bool {
	select {
	case <-nb.done:
		return nb.err != nil
	default:
		return false
	}
}

// takeNext snapshots the stage after stage and saves it unclaimed.
func (b *stageBackups) takeNext(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) (*backup.Snapshot, v1alpha1.BackupRef, error) {
	these, err := b.objects.targets(ctx, r, stage)
	if err != nil {
		return nil, v1alpha1.BackupRef{}, err
	}
	next, err := b.objects.targets(ctx, r, stage+1)
	if err != nil {
		return nil, v1alpha1.BackupRef{}, err
	}
	if !disjoint(these, next, b.objects.reach(r, stage)) {
		return nil, v1alpha1.BackupRef{}, fmt.Errorf("stage %s touches what stage %s changes", r.Status.Stages[stage+1].Name, r.Status.Stages[stage].Name)
	}
	snap, err := b.client.Take(ctx, next, backup.Fresh)
	if err != nil {
		return nil, v1alpha1.BackupRef{}, err
	}
	snap.RunUID = string(r.UID)
	ref, err := b.client.SaveUnclaimed(ctx, stageKey(r, stage+1), snap)
	return snap, ref, err
}

// useNext answers the stage's backup action with its next backup, when
// this process took one for this attempt of the run, nothing it holds
// moved since, and it is claimed; ok is false otherwise, and the stage
// takes its backup as usual (writing over the unclaimed one).
func (b *stageBackups) useNext(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) (engine.Outcome, bool) {
	nb := b.next.Load()
	if nb == nil || nb.run != string(r.UID) || nb.attempt != r.Status.Attempt || nb.stage != stage {
		return engine.Outcome{}, false
	}
	b.next.CompareAndSwap(nb, nil) // one use: a retried backup reads afresh
	select {
	case <-nb.done:
	case <-ctx.Done():
		return engine.Outcome{}, false
	}
	if nb.err != nil {
		return engine.Outcome{}, false
	}
	if unmoved, err := b.client.Unmoved(ctx, nb.snap, b.objects.cachedMeta); err != nil || !unmoved {
		return engine.Outcome{}, false
	}
	if err := b.client.Claim(ctx, nb.ref); err != nil {
		return engine.Outcome{}, false
	}
	b.remember(r, stage, nb.snap)
	ref := nb.ref
	return engine.Outcome{OK: true, Backup: &ref, Message: describeBackup(&ref) + ", taken while stage " + nb.during + " ran"}, true
}
