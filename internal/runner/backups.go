package runner

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/step"
)

// stageBackups owns the backups of a drive's stages: it reads each
// stage's snapshot, saves it (written, read back and verified before any
// change of the stage), claims one taken before the stage's turn, and
// finds those a stopped process took (findBackups). Every backup is
// keyed by run, attempt and stage (stageKey); engine/doc.go says why a
// run killed at any point resumes safely with them.
//
// A stage's snapshot is read in one of three ways, the first that
// serves:
//   - read ahead: the first stage's, while preflight and the plan's
//     health checks run (readAhead, backups_first.go);
//   - next: the stage after a Confined one, while that one's steps run
//     (nextBackup, backups_next.go);
//   - at its turn, read then.
//
// The snapshot last saved seeds its stage's steps (step.Seeder).
type stageBackups struct {
	client  *backup.Client
	objects stageObjects
	// first is the first stage's snapshot read ahead for a new run; nil
	// when there is none.
	first *readAhead
	next  atomic.Pointer[nextBackup]
	last  atomic.Pointer[stageSnapshot]
}

// stageObjects is what the backups ask of a stage's steps (the actor
// answers, building their executors).
type stageObjects interface {
	// targets are the objects every step of the stage names; a step
	// whose spec does not build is an *invalidStepError.
	targets(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) ([]step.Ref, error)
	// kept is what the stage's kinds keep besides objects (step.Keeper).
	kept(ctx context.Context, stage int) ([]v1alpha1.HelmRevision, error)
	// reach is what the stage's steps change besides their targets
	// (step.Reacher).
	reach(r *v1alpha1.UpgradeRun, stage int) step.Reach
	// cachedMeta is the run's informers' view of an object
	// (backup.MetaLookup).
	cachedMeta(ref step.Ref) (*metav1.ObjectMeta, bool)
}

// stageSnapshot is a stage's snapshot, as the backup of the run's
// attempt took it.
type stageSnapshot struct {
	run     string // the run's UID
	attempt int
	stage   int
	snap    *backup.Snapshot
}

// stageKey names the backup of the stage in the run's current attempt.
func stageKey(r *v1alpha1.UpgradeRun, stage int) backup.Key {
	return backup.Key{Run: r.Name, Stage: r.Status.Stages[stage].Name, Attempt: r.Status.Attempt}
}

// take answers the stage's backup action. ahead, if not nil, is the
// stage's snapshot read ahead (readAhead). A backup that a stopped
// process took of this stage attempt was recorded before the drive
// (Session.reconcile) when its steps may have run; otherwise no step of
// the stage ran, and Save writes over what is left of it.
func (b *stageBackups) take(ctx context.Context, r *v1alpha1.UpgradeRun, stage int, ahead *backup.Snapshot) (engine.Outcome, error) {
	snap := ahead
	if snap == nil {
		if o, ok := b.useNext(ctx, r, stage); ok {
			return o, nil
		}
		o, read, err := b.read(ctx, r, stage, backup.Fresh)
		if err != nil || read == nil {
			return o, err
		}
		snap = read
	}
	snap.RunUID = string(r.UID)
	var err error
	// What the stage's kinds keep (Helm releases' revisions) goes into
	// the snapshot, so a backup found after a stop holds it as the record
	// would (backup.Client.Find).
	if snap.HelmReleases, err = b.objects.kept(ctx, stage); err != nil {
		return failed(ctx, err)
	}
	ref, err := b.client.Save(ctx, stageKey(r, stage), snap)
	if err != nil {
		return failed(ctx, fmt.Errorf("save: %w", err))
	}
	b.remember(r, stage, snap)
	ref.HelmReleases = snap.HelmReleases
	return engine.Outcome{OK: true, Backup: &ref, Message: describeBackup(&ref)}, nil
}

// read takes the stage's snapshot; a nil snapshot comes with the outcome
// or error that stopped it.
func (b *stageBackups) read(ctx context.Context, r *v1alpha1.UpgradeRun, stage int, from backup.Read) (engine.Outcome, *backup.Snapshot, error) {
	refs, err := b.objects.targets(ctx, r, stage)
	var invalid *invalidStepError
	switch {
	case errors.As(err, &invalid):
		return engine.Outcome{Message: invalid.Error()}, nil, nil
	case err != nil:
		o, err := failed(ctx, err)
		return o, nil, err
	}
	snap, err := b.client.Take(ctx, refs, from)
	if err != nil {
		o, err := failed(ctx, fmt.Errorf("snapshot: %w", err))
		return o, nil, err
	}
	return engine.Outcome{}, snap, nil
}

// remember keeps the stage's saved snapshot for its steps (seed).
func (b *stageBackups) remember(r *v1alpha1.UpgradeRun, stage int, snap *backup.Snapshot) {
	b.last.Store(&stageSnapshot{run: string(r.UID), attempt: r.Status.Attempt, stage: stage, snap: snap})
}

// seed gives a step the copies of its targets that its stage's backup
// took in this process, for this attempt of the run: the step then need
// not read them again before it writes (it writes only if they did not
// move since). A stage resumed elsewhere has none, and its steps read.
func (b *stageBackups) seed(r *v1alpha1.UpgradeRun, stage int, s step.Seeder) {
	t := b.last.Load()
	if t == nil || t.run != string(r.UID) || t.attempt != r.Status.Attempt || t.stage != stage {
		return
	}
	s.Seed(t.snap.Held)
}

// findBackups looks for the backups of the stages engine.Sought names: a
// stopped process may have saved them and not lived to record them. A
// backup that is there but does not load is an error: it may be the only
// copy of the objects before their stage.
func findBackups(ctx context.Context, client *backup.Client, r *v1alpha1.UpgradeRun) ([]engine.Found, error) {
	var found []engine.Found
	for _, i := range engine.Sought(r) {
		ss := r.Status.Stages[i]
		key := stageKey(r, i)
		ref, err := client.Find(ctx, key, string(r.UID))
		switch {
		case ctx.Err() != nil:
			return nil, context.Cause(ctx)
		case errors.Is(err, backup.ErrCorrupt):
			// Running again cannot help: the objects as they were before
			// the stage are in no backup that loads.
			return nil, fmt.Errorf("stage %s was backing up when run %s stopped, and its backup is damaged (%w), so neither going on nor a rollback could undo what its steps may have changed; nothing was changed: put the stage's objects back as they were before the run by hand, delete that backup (kubectl delete secrets -n %s -l %s), then run the command again: the stage is then backed up afresh", ss.Name, r.Name, err, client.Namespace(), key.Selector())
		case err != nil:
			return nil, fmt.Errorf("stage %s was backing up when run %s stopped, and its backup in namespace %s cannot be read, so neither going on nor a rollback could undo that stage's changes: %w; nothing was changed: check that backup (upshift backup show %s --stage %s) and this user's access to Secrets there, then run the command again", ss.Name, r.Name, client.Namespace(), err, r.Name, ss.Name)
		case ref != nil:
			found = append(found, engine.Found{Stage: i, Backup: ref})
		}
	}
	return found, nil
}

// describeBackup says what a backup holds: objects as they were, and how
// many the stage may create (deleted again on rollback).
func describeBackup(ref *v1alpha1.BackupRef) string {
	return fmt.Sprintf("%d existing object(s) saved, %d to be created, in %d Secret(s)", ref.Objects, ref.Absent, len(ref.Secrets))
}
