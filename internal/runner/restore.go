package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
)

// restore puts the stage's objects back from its backup and verifies them.
// A corrupt backup refuses: restoring half a snapshot is worse than none.
func (a *actor) restore(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) (engine.Outcome, error) {
	ref := r.Status.Stages[stage].Backup
	snap, err := a.backups.client.Load(ctx, *ref)
	if err != nil {
		if errors.Is(err, backup.ErrCorrupt) {
			return engine.Outcome{Message: "backup unusable, nothing restored: " + err.Error()}, nil
		}
		return failed(ctx, fmt.Errorf("load backup: %w", err))
	}
	owns, undone, o, err := a.revert(ctx, r, stage)
	if err != nil || !o.OK {
		return o, err
	}
	rb, err := a.backups.client.Restore(ctx, snap, backup.RestoreOptions{ReadyTimeout: a.readyTimeout, Managed: ownedBy(snap, owns)})
	if err != nil {
		return failed(ctx, fmt.Errorf("restore: %w", err))
	}
	notBack, err := a.envNotBack(ctx, stage, snap)
	if err != nil {
		return failed(ctx, fmt.Errorf("verify the variables envKept gates name: %w", err))
	}
	rb.Differences = append(rb.Differences, notBack...)
	o = engine.Outcome{OK: len(rb.Differences) == 0, Rollback: &rb}
	var parts []string
	parts = append(parts, undone...)
	if len(rb.Kept) > 0 {
		parts = append(parts, "kept "+strings.Join(rb.Kept, "; "))
	}
	if !o.OK {
		parts = append(parts, fmt.Sprintf("%d difference(s) after restore: %s", len(rb.Differences), strings.Join(rb.Differences, "; ")))
	}
	parts = append(parts, rb.NotCompared...) // each says "…, not compared"
	o.Message = strings.Join(parts, "; ")
	return o, nil
}

// revert undoes, last step first, what the snapshot restore cannot: each
// begun step whose kind is a step.Reverter (a Helm release returned to
// the revision the backup holds, a job's down-migration run) reverts,
// before the stage's objects are restored (the schema goes back while the
// old objects are not yet back). A failure stops the rollback there, with
// the snapshot not restored, for an operator. owns are the reverters'
// claims on the snapshot's objects they put back themselves.
func (a *actor) revert(ctx context.Context, r *v1alpha1.UpgradeRun, stage int) (owns []func(*unstructured.Unstructured) bool, undone []string, o engine.Outcome, err error) {
	specs := a.plan.Plan.Spec.Stages[stage].Steps
	for i := len(specs) - 1; i >= 0; i-- {
		if r.Status.Stages[stage].Steps[i].Attempts == 0 {
			continue // never begun: nothing to undo
		}
		in := a.input(r, stage, i)
		in.RollbackObjects = a.plan.Objects[resolve.RollbackJobPath(stage, i)]
		rv := steps.NewReverter(in, a.deps)
		if rv == nil {
			continue
		}
		done, err := rv.Revert(ctx, r.Status.Stages[stage].Backup)
		if err != nil {
			o, err := failed(ctx, fmt.Errorf("the rollback of step %s failed, nothing else restored: %w", specs[i].Name, err))
			return nil, nil, o, err
		}
		if done.Status != step.Succeeded {
			if ctx.Err() != nil {
				return nil, nil, engine.Outcome{}, context.Cause(ctx)
			}
			msg := fmt.Sprintf("the rollback of step %s failed, nothing else restored: %s", specs[i].Name, done.Message)
			if a.plan.SourcesErr != nil {
				msg += " (" + a.plan.SourcesErr.Error() + ")"
			}
			return nil, nil, engine.Outcome{Message: msg}, nil
		}
		if done.Owns != nil {
			owns = append(owns, done.Owns)
		}
		undone = append(undone, done.Message)
	}
	return owns, undone, engine.Outcome{OK: true}, nil
}

// ownedBy are the snapshot's objects a reverter put back itself (a
// release's, which Helm restored): the restore only verifies them
// instead of writing over that work.
func ownedBy(snap *backup.Snapshot, owns []func(*unstructured.Unstructured) bool) map[step.Ref]bool {
	if len(owns) == 0 {
		return nil
	}
	out := map[step.Ref]bool{}
	for _, e := range snap.Entries {
		for _, own := range owns {
			if e.Object != nil && own(e.Object) {
				out[e.Ref] = true
			}
		}
	}
	return out
}
