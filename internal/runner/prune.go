package runner

import (
	"context"
	"fmt"
)

// prune deletes the oldest finished runs and their backups beyond
// KeepRuns. Unfinished runs are never pruned. A failure to prune is
// reported, not fatal: the upgrade itself is done.
func (s *Session) prune(ctx context.Context, current string) {
	runs, err := s.store.List(ctx) // oldest first
	if err != nil {
		s.opts.Notice(fmt.Sprintf("prune old runs: %v", err))
		return
	}
	excess := len(runs) - s.opts.KeepRuns
	for _, r := range runs {
		if excess <= 0 {
			return
		}
		if !r.Status.Phase.Finished() || r.Name == current {
			continue
		}
		// The record first: leftover backups are harmless (backup list
		// shows them), a record pointing at deleted backups is not.
		if err := s.store.Delete(ctx, r.Name); err != nil {
			s.opts.Notice(fmt.Sprintf("prune run %s: %v", r.Name, err))
			continue
		}
		if err := s.backups.DeleteRun(ctx, r.Name); err != nil {
			s.opts.Notice(fmt.Sprintf("prune backups of run %s: %v", r.Name, err))
		}
		s.opts.Notice(fmt.Sprintf("pruned run %s and its backups (keeping the last %d runs)", r.Name, s.opts.KeepRuns))
		excess--
	}
}
