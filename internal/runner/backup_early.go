package runner

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
)

// earlyBackup is the backup of the stage after one of image (or crds)
// steps, taken while those roll out: between two stages of a sequential plan, reading,
// writing and reading back the next stage's backup would otherwise be the
// longest wait between a rollout's end and the next change.
//
// It is saved unclaimed (backup.Client.SaveUnclaimed): until its stage's
// turn confirms it and claims it, a resumed run does not adopt it, and a
// Save of the stage writes over it. At that turn, the run's informers or
// else one read of metadata tell whether every object it holds is still
// at the version it holds (backup.Snapshot.UnmovedIn, Client.Unmoved); if so
// it is claimed and is the stage's backup, as good as one read then. If
// not, or if anything about it failed, the stage takes its backup as
// usual.
type earlyBackup struct {
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

// earlyBackupFits tells whether the stage after stage may be backed up
// while stage's steps run, as their kinds declare (step.Traits): every
// step of stage is Confined (an image step changes nothing but its
// workloads' pod templates and what their controllers do; a crds step
// nothing but its CRDs and how their kinds are served: the next stage
// must hold no object of their groups, see crdGroups), and every step of
// the next stage NamesUpFront (its objects known before anything runs,
// nothing kept besides them, as a Helm release's revision is). The
// objects themselves are compared once their Targets are known
// (disjoint).
func earlyBackupFits(stages []v1alpha1.Stage, stage int) bool {
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

// movedByRollouts are the kinds an image step's rollout writes besides
// its workload: a stage that backs one up is not backed up early.
var movedByRollouts = map[schema.GroupKind]bool{
	{Kind: "Pod"}:                                      true,
	{Group: "apps", Kind: "ReplicaSet"}:                true,
	{Group: "apps", Kind: "ControllerRevision"}:        true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: true,
}

// disjoint tells whether the next stage's objects (next) are none of
// stage's (these), of no kind a rollout writes, and of no group whose
// CRDs stage changes (groups).
func disjoint(these, next []step.Ref, groups map[string]bool) bool {
	mine := map[string]bool{}
	for _, t := range these {
		mine[refKey(t)] = true
	}
	for _, n := range next {
		gk := n.GroupVersionKind().GroupKind()
		if mine[refKey(n)] || movedByRollouts[gk] || groups[gk.Group] {
			return false
		}
	}
	return true
}

// crdGroups are the API groups of the CRDs the stage's crds steps apply:
// how their objects are served (defaults, pruning, versions) may change
// with them.
func (a *actor) crdGroups(stage int) map[string]bool {
	groups := map[string]bool{}
	for i, s := range a.plan.Plan.Spec.Stages[stage].Steps {
		if s.CRDs == nil {
			continue
		}
		for _, crd := range a.plan.ObjectsFor(stage, i) {
			if g, _, _ := unstructured.NestedString(crd.Object, "spec", "group"); g != "" {
				groups[g] = true
			}
		}
	}
	return groups
}

func refKey(r step.Ref) string {
	return r.GroupVersionKind().GroupKind().String() + "/" + r.Namespace + "/" + r.Name
}

// startEarlyBackup starts taking the backup of the stage after stage,
// when it fits (earlyBackupFits, disjoint) and none is taken or being
// taken for it. It ends with ctx: the step's, so a backup not saved by
// the end of the step is dropped (its stage takes one as usual).
func (a *actor) startEarlyBackup(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) {
	stages := a.plan.Plan.Spec.Stages
	if !earlyBackupFits(stages, stage) {
		return
	}
	if next := r.Status.Stages[stage+1]; next.Phase != v1alpha1.PhasePending || next.Backup != nil {
		return // begun already (a step re-run after a resume): its backup stands
	}
	eb := &earlyBackup{run: string(r.UID), attempt: r.Status.Attempt, stage: stage + 1, during: stages[stage].Name, done: make(chan struct{})}
	for {
		cur := a.early.Load()
		if cur != nil && cur.run == eb.run && cur.attempt == eb.attempt && cur.stage == eb.stage && !cur.failed() {
			return // a step of the same stage started it
		}
		if a.early.CompareAndSwap(cur, eb) {
			break
		}
	}
	go func() {
		defer close(eb.done)
		eb.snap, eb.ref, eb.err = a.takeEarly(ctx, r, stage)
	}()
}

// failed tells whether the early backup ended without one (cut short by
// the end of the step that started it, say): another step of the stage
// may start it again.
func (eb *earlyBackup) failed() bool {
	select {
	case <-eb.done:
		return eb.err != nil
	default:
		return false
	}
}

// takeEarly snapshots the stage after stage and saves it unclaimed.
func (a *actor) takeEarly(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) (*backup.Snapshot, v1alpha1.BackupRef, error) {
	these, err := a.targets(ctx, r, stage)
	if err != nil {
		return nil, v1alpha1.BackupRef{}, err
	}
	next, err := a.targets(ctx, r, stage+1)
	if err != nil {
		return nil, v1alpha1.BackupRef{}, err
	}
	if !disjoint(these, next, a.crdGroups(stage)) {
		return nil, v1alpha1.BackupRef{}, fmt.Errorf("stage %s touches what stage %s does", a.plan.Plan.Spec.Stages[stage+1].Name, a.plan.Plan.Spec.Stages[stage].Name)
	}
	snap, err := a.backups.Take(ctx, next)
	if err != nil {
		return nil, v1alpha1.BackupRef{}, err
	}
	snap.RunUID = string(r.UID)
	enc, err := backup.Encode(snap)
	if err != nil {
		return nil, v1alpha1.BackupRef{}, err
	}
	key := backup.Key{Run: r.Name, Stage: a.plan.Plan.Spec.Stages[stage+1].Name, Attempt: r.Status.Attempt}
	ref, err := a.backups.SaveUnclaimed(ctx, key, enc)
	return snap, ref, err
}

// cachedMeta looks an object up in the run's informers, which the waits
// of the stages before started (backup.MetaLookup).
func (a *actor) cachedMeta(ref step.Ref) (*metav1.ObjectMeta, bool) {
	gvk := ref.GroupVersionKind()
	m, err := a.deps.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, false
	}
	uid, rv, found, known := a.deps.Waiter.CachedMeta(m.Resource, ref.Namespace, ref.Name)
	switch {
	case !known:
		return nil, false
	case !found:
		return nil, true
	}
	return &metav1.ObjectMeta{UID: uid, ResourceVersion: rv}, true
}

// useEarlyBackup answers the stage's backup action with its early backup,
// when this process took one for this attempt of the run, nothing it
// holds moved since, and it is claimed; ok is false otherwise, and the
// stage takes its backup as usual (writing over the unclaimed one).
func (a *actor) useEarlyBackup(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) (engine.Outcome, bool) {
	eb := a.early.Load()
	if eb == nil || eb.run != string(r.UID) || eb.attempt != r.Status.Attempt || eb.stage != stage {
		return engine.Outcome{}, false
	}
	a.early.CompareAndSwap(eb, nil) // one use: a retried backup reads afresh
	select {
	case <-eb.done:
	case <-ctx.Done():
		return engine.Outcome{}, false
	}
	if eb.err != nil {
		return engine.Outcome{}, false
	}
	if !eb.snap.UnmovedIn(a.cachedMeta) {
		if unmoved, err := a.backups.Unmoved(ctx, eb.snap); err != nil || !unmoved {
			return engine.Outcome{}, false
		}
	}
	if err := a.backups.Claim(ctx, eb.ref); err != nil {
		return engine.Outcome{}, false
	}
	a.taken.Store(&takenSnapshot{run: eb.run, attempt: eb.attempt, stage: stage, snap: eb.snap})
	ref := eb.ref
	return engine.Outcome{OK: true, Backup: &ref, Message: describeBackup(&ref) + ", taken while stage " + eb.during + " ran"}, true
}
