package runner

import (
	"context"
	"sync"
	"time"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
)

// readAhead is the first stage's snapshot of a new run, read while
// prepare writes the run's sources and record: on a platform of many CRDs
// the reads are the longest part of the wait before the first change, and
// nothing else needs them until the first stage's backup.
//
// It is as good as one read at the backup's turn: it is read with the
// lease held, once the plan's health checks passed, and until that turn
// this process changes nothing of the platform (prepare writes only the
// record; a new run has no freeze to reinstate). It serves only the first
// action of a drive of a run that prepare started, and only if that
// action is the first stage's backup; anything else drops it. A
// read-ahead that failed is read again at the backup's turn, where its
// failure is reported as usual.
type readAhead struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}    // closed when the reads ended
	snap   *backup.Snapshot // nil when they failed
	used   bool
}

// startReadAhead starts reading the first stage's snapshot as a new run
// of the plan would take it (attempt 1).
func (s *Session) startReadAhead(ctx context.Context, p *Resolved) *readAhead {
	ctx, cancel := context.WithCancel(ctx)
	ra := &readAhead{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ra.done)
		run := engine.NewRun(p.Plan, p.Digest, p.SourceDigests, time.Now())
		o, snap, err := s.newActor(p, s.deps).snapshot(ctx, run, 0)
		if err == nil && o.Message == "" {
			ra.snap = snap
		}
	}()
	return ra
}

// take answers the snapshot read ahead, for the drive's first action,
// which must be the first stage's backup, and drops it either way: nil
// when there is none to use. It waits for the reads no longer than ctx
// (the action's: Ctrl-C and abort end it).
func (ra *readAhead) take(ctx context.Context, act engine.Action) *backup.Snapshot {
	if ra == nil {
		return nil
	}
	ra.mu.Lock()
	used := ra.used
	ra.used = true
	ra.mu.Unlock()
	if used {
		return nil
	}
	if act.Kind != engine.Backup || act.Stage != 0 {
		ra.cancel()
		return nil
	}
	select {
	case <-ra.done:
		return ra.snap
	case <-ctx.Done():
		ra.cancel()
		return nil
	}
}

// drop stops a read-ahead no drive will use.
func (ra *readAhead) drop() {
	if ra == nil {
		return
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	ra.used = true
	ra.cancel()
}
