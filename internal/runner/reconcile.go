package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

// reconcile records in a saved run the backups a stopped process took and
// did not live to record: what findBackups found goes to
// engine.Reconcile. It runs once a loaded run is held under the lease and
// before anything acts on it or a command (rollback, retry) changes it: a
// rollback decided without a found backup would not restore its stage.
// An error changes nothing.
func (s *Session) reconcile(ctx context.Context, r *v1alpha1.UpgradeRun) error {
	found, err := findBackups(ctx, s.backups, r)
	if err != nil {
		return err
	}
	for _, f := range engine.Reconcile(r, found, time.Now()) {
		s.opts.Notice(fmt.Sprintf("stage %s: its backup was taken before the run stopped (%s); a rollback restores it, going on keeps it", r.Status.Stages[f.Stage].Name, describeBackup(f.Backup)))
	}
	return nil
}
