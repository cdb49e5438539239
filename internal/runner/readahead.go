package runner

import (
	"context"
	"sync"
	"time"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
)

// readAhead is the first stage's snapshot of a new run, read while the
// run's record and sources are being written (prepare): on a platform of
// many CRDs the reads are the longest part of the wait before the first
// change, and nothing else needs the API server then.
//
// It is as good as one read at the backup's turn: it is read with the
// lease held, and until that turn this process changes nothing of the
// platform (prepare writes only the record; a new run has no freeze to
// reinstate). So it serves only the first action of a drive of a run
// that prepare started, and only if that action is the first stage's
// backup; anything else drops it. A read-ahead that failed is read again
// at the backup's turn, where its failure is reported as usual.
//
// Once the run is created (its UID is part of the snapshot), encodeFor
// encodes the snapshot while the run's first status is saved: on such a
// platform encoding costs tens of milliseconds more before the first
// change. Only an encoded read-ahead serves.
type readAhead struct {
	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}    // closed when the reads ended
	snap    *backup.Snapshot // nil when the reads failed
	encoded chan struct{}    // closed when encodeFor's encoding ended; nil before encodeFor
	enc     *backup.Encoded  // nil when the reads or the encoding failed
	used    bool
}

// startReadAhead starts reading the first stage's snapshot as a new run
// of the plan would take it (attempt 1).
func (s *Session) startReadAhead(ctx context.Context, p *Resolved) *readAhead {
	ctx, cancel := context.WithCancel(ctx)
	ra := &readAhead{cancel: cancel, done: make(chan struct{})}
	a := s.newActor(p, s.deps)
	run := engine.NewRun(p.Plan, p.Digest, p.SourceDigests, time.Now())
	go func() {
		defer close(ra.done)
		if o, snap, err := a.snapshot(ctx, run, 0); err == nil && o.Message == "" {
			ra.snap = snap
		}
	}()
	return ra
}

// encodeFor encodes the snapshot, once read, for the run of this UID.
func (ra *readAhead) encodeFor(uid string) {
	if ra == nil {
		return
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if ra.used || ra.encoded != nil {
		return
	}
	encoded := make(chan struct{})
	ra.encoded = encoded
	go func() {
		defer close(encoded)
		<-ra.done
		if ra.snap == nil {
			return
		}
		snap := *ra.snap // the read snapshot stays as read
		snap.RunUID = uid
		if enc, err := backup.Encode(&snap); err == nil {
			ra.enc = enc // a failed encoding is met again, and reported, at the backup's turn
		}
	}()
}

// take answers the read-ahead, encoded, for the drive's first action,
// which must be the first stage's backup, and drops it either way: nil
// when there is none to use. It waits for the reads and the encoding no
// longer than ctx (the action's: Ctrl-C and abort end it).
func (ra *readAhead) take(ctx context.Context, act engine.Action) *backup.Encoded {
	if ra == nil {
		return nil
	}
	ra.mu.Lock()
	used, encoded := ra.used, ra.encoded
	ra.used = true
	ra.mu.Unlock()
	if used {
		return nil
	}
	if act.Kind != engine.Backup || act.Stage != 0 || encoded == nil {
		ra.cancel()
		return nil
	}
	select {
	case <-encoded:
		return ra.enc
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
