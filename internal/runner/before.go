package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/gates"
)

// errNoStageBackup: a gate compares with the stage's backup and the run
// records none (a plan edited under a running run would be refused, so
// this is a record from elsewhere).
var errNoStageBackup = errors.New("the stage has no backup recorded to compare with")

// before loads the stage's backup when one of gs compares with it
// (gates.NeedsBefore), and returns nil otherwise: the other gates run
// without reading it. A backup that cannot be read is the gate's failure,
// as it would be the rollback's.
func (a *actor) before(ctx context.Context, r *v1alpha1.UpgradeRun, stage int, gs ...v1alpha1.Gate) (gates.Before, error) {
	needed := false
	for _, g := range gs {
		needed = needed || gates.NeedsBefore(g)
	}
	if !needed {
		return nil, nil
	}
	ref := r.Status.Stages[stage].Backup
	if ref == nil {
		return nil, errNoStageBackup
	}
	snap, err := a.backups.client.Load(ctx, *ref)
	if err != nil {
		return nil, fmt.Errorf("read the stage's backup: %w", err)
	}
	return snap, nil
}

// beforeFailed turns before's error into the gate's outcome: a backup
// that is missing or corrupt fails the gate; IO that could not be done
// stops or fails the run as for any action (failed).
func (a *actor) beforeFailed(ctx context.Context, err error) (engine.Outcome, error) {
	if errors.Is(err, backup.ErrCorrupt) || errors.Is(err, errNoStageBackup) {
		return engine.Outcome{Message: err.Error()}, nil
	}
	return failed(ctx, err)
}
