package runner

import (
	"context"
	"sync"
	"time"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// readAhead is the first stage's snapshot of a new run, read before the
// run's record exists: on a platform of many CRDs the reads are the
// longest part of the wait before the first change, and nothing else
// needs them until the first stage's backup.
//
// It must be as good as one read at the backup's turn. One read with the
// lease held is: until that turn this process changes nothing of the
// platform (prepare writes only the record; a new run has no freeze to
// reinstate). One read before the lease is only if no process of Upshift
// held the lease between the moment the reads began and the take, and
// none of its objects moved by then (preLeaseRead). Either way it
// serves only the first action of a drive of a run that prepare started,
// and only if that action is the first stage's backup; anything else
// drops it. A read-ahead that failed is read again at the backup's turn,
// where its failure is reported as usual.
type readAhead struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{} // closed when the reads ended
	used   bool
	// snap is the snapshot as read, once read is closed (nil when the
	// reads failed or were not made): preflight reads the plan's live
	// CRDs from it (preLeaseRead.snapshot). Nobody changes it.
	snap     *backup.Snapshot
	read     chan struct{}
	readOnce sync.Once
	// cached: read before the lease, from the API server's cache; it
	// serves only once confirmed: confirmed is closed once the
	// snapshot's objects were checked under the lease (confirm), and
	// unmoved tells whether none had moved since.
	cached    bool
	confirmed chan struct{}
	unmoved   bool
}

func newReadAhead(cancel context.CancelFunc) *readAhead {
	return &readAhead{cancel: cancel, done: make(chan struct{}), read: make(chan struct{})}
}

// endRead marks the reads ended (read or not).
func (ra *readAhead) endRead() { ra.readOnce.Do(func() { close(ra.read) }) }

// startReadAhead starts reading the first stage's snapshot as a new run
// of the plan would take it (attempt 1).
func (s *Session) startReadAhead(ctx context.Context, p *resolve.Plan) *readAhead {
	ctx, cancel := context.WithCancel(ctx)
	ra := newReadAhead(cancel)
	go func() {
		defer close(ra.done)
		ra.readWith(ctx, s.newActor(p, s.deps).backups, p, backup.Fresh)
	}()
	return ra
}

// readWith reads the snapshot as a new run of p would, from where from
// says; failures leave snap nil.
func (ra *readAhead) readWith(ctx context.Context, b *stageBackups, p *resolve.Plan, from backup.Read) {
	defer ra.endRead()
	run := engine.NewRun(p.Plan, p.Digest, p.SourceDigests, time.Now())
	if o, snap, err := b.read(ctx, run, 0, from); err == nil && o.Message == "" {
		ra.snap = snap
	}
}

// take answers the snapshot read ahead, for the drive's first action,
// which must be the first stage's backup, and drops it either way: nil
// when there is none to use. It waits for the reads (and a cached one's
// confirmation) no longer than ctx (the action's: Ctrl-C and abort end
// it).
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
	case <-ctx.Done():
		ra.cancel()
		return nil
	}
	if ra.snap == nil {
		return nil
	}
	if ra.cached {
		if ra.confirmed == nil {
			return nil // never confirmed: read again by the backup
		}
		select {
		case <-ra.confirmed:
		case <-ctx.Done():
			return nil
		}
		if !ra.unmoved {
			return nil // read again by the backup
		}
	}
	// A copy: preflight may still read the snapshot as read, and the
	// backup sets its RunUID.
	snap := *ra.snap
	return &snap
}

// confirm checks, under the lease whose context ctx is, that every
// object the snapshot holds is still as read (backup.Client.Unmoved):
// read before the lease, the snapshot may be older than the stage's
// start by the whole preflight and the plan's health checks, time enough
// for an autoscaler, a GitOps sync or this process's own CRD install to
// write. Metadata alone is read, beside prepare's writes: a changed
// object makes take answer nil, and the backup reads afresh.
func (ra *readAhead) confirm(ctx context.Context, b *backup.Client) {
	ra.confirmed = make(chan struct{})
	go func() {
		defer close(ra.confirmed)
		select {
		case <-ra.read:
		case <-ctx.Done():
			return
		}
		if ra.snap == nil {
			return
		}
		ok, err := b.Unmoved(ctx, ra.snap, nil)
		ra.unmoved = ok && err == nil
	}()
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
