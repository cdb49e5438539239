package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
)

// reconcile records in a saved run the backups a stopped process took and
// did not live to record: it looks for those of the stages engine.Sought
// names and hands what it found to engine.Reconcile. It runs once a
// loaded run is held under the lease and before anything acts on it or a
// command (rollback, retry) changes it: a rollback decided without a
// found backup would not restore its stage.
//
// A backup that is there but does not load stops here, changing
// nothing: it may be the only copy of the objects before their stage.
func (s *Session) reconcile(ctx context.Context, r *v1alpha1.UpgradeRun) error {
	var found []engine.Found
	for _, i := range engine.Sought(r) {
		ss := r.Status.Stages[i]
		key := backup.Key{Run: r.Name, Stage: ss.Name, Attempt: r.Status.Attempt}
		ref, err := s.backups.Find(ctx, key, string(r.UID))
		switch {
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case errors.Is(err, backup.ErrCorrupt):
			// Running again cannot help: the objects as they were before
			// the stage are in no backup that loads.
			return fmt.Errorf("stage %s was backing up when run %s stopped, and its backup is damaged (%w), so neither going on nor a rollback could undo what its steps may have changed; nothing was changed: put the stage's objects back as they were before the run by hand, delete that backup (kubectl delete secrets -n %s -l %s), then run the command again: the stage is then backed up afresh", ss.Name, r.Name, err, s.backups.Namespace(), key.Selector())
		case err != nil:
			return fmt.Errorf("stage %s was backing up when run %s stopped, and its backup in namespace %s cannot be read, so neither going on nor a rollback could undo that stage's changes: %w; nothing was changed: check that backup (upshift backup show %s --stage %s) and this user's access to Secrets there, then run the command again", ss.Name, r.Name, s.backups.Namespace(), err, r.Name, ss.Name)
		case ref != nil:
			found = append(found, engine.Found{Stage: i, Backup: ref})
		}
	}
	for _, f := range engine.Reconcile(r, found, time.Now()) {
		s.opts.Notice(fmt.Sprintf("stage %s: its backup was taken before the run stopped (%s); a rollback restores it, going on keeps it", r.Status.Stages[f.Stage].Name, describeBackup(f.Backup)))
	}
	return nil
}
