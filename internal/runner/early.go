package runner

import (
	"context"
	"errors"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// earlyReadAhead is a read-ahead (readAhead) begun before the lease,
// beside the preflight, which on a platform of many CRDs waits on the
// API server as long as the reads do. What it read is as good as a read
// under the lease only if no process of Upshift held the lease since the
// reads began (the lease is observed, released, just before they begin,
// and the take must have replaced that very record: lease.Held.TakenFrom)
// and no object it holds moved since (checked under the lease:
// readAhead.confirm). Otherwise the backup reads under the lease, as
// always.
type earlyReadAhead struct {
	plan     *resolve.Plan
	observed chan struct{} // closed once obs is read (or could not be)
	obs      lease.Observation
	ahead    *readAhead
}

// ReadAhead begins reading, and encoding, the first stage's snapshot of a
// new run of the plan, for the Apply of that plan that follows on this
// session. It reads nothing for a plan whose run is there already (a
// resume takes no such snapshot) or while another process holds the
// lease.
func (s *Session) ReadAhead(ctx context.Context, p *resolve.Plan) {
	ctx, cancel := context.WithCancel(ctx)
	e := &earlyReadAhead{plan: p, observed: make(chan struct{}), ahead: newReadAhead(cancel)}
	e.ahead.cached = true
	s.early.drop()
	s.early = e
	// Apply's first read, asked now: it then starts with the lease.
	go s.store.CheckCRD(ctx)
	go func() {
		defer close(e.ahead.done)
		defer e.ahead.endRead()
		// The lease and the run are asked side by side: the reads wait
		// for both, and on a platform of many CRDs preflight waits for
		// the reads.
		exists := make(chan bool, 1)
		go func() {
			// Only the UpgradeRun: a record of an earlier version (a
			// Secret) makes apply resume, which drops what was read.
			_, err := s.store.GetResource(ctx, p.RunName())
			exists <- !errors.Is(err, runstore.ErrNotFound)
		}()
		obs, err := lease.Observe(ctx, s.cs, s.opts.Namespace, lease.DefaultName)
		e.obs = obs
		close(e.observed)
		if found := <-exists; found || err != nil || !obs.Free() {
			return
		}
		// From the API server's cache: confirm reads what moved since,
		// the cache's lag included, before the snapshot serves.
		a := s.newActor(p, s.deps)
		e.ahead.readWith(ctx, a, p, a.backups.TakeCached)
	}()
}

// snapshot is what the early read-ahead of p read, once its reads ended:
// nil when there is none, it read nothing, or ctx ended first.
func (e *earlyReadAhead) snapshot(ctx context.Context, p *resolve.Plan) *backup.Snapshot {
	if e == nil || e.plan != p {
		return nil
	}
	select {
	case <-e.ahead.read:
		return e.ahead.snap
	case <-ctx.Done():
		return nil
	}
}

// takeEarly hands the session's early read-ahead to Apply, once its
// lease observation is in; nil when there is none.
func (s *Session) takeEarly(ctx context.Context) *earlyReadAhead {
	e := s.early
	s.early = nil
	if e == nil {
		return nil
	}
	select {
	case <-e.observed:
		return e
	case <-ctx.Done():
		e.drop()
		return nil
	}
}

// leaseFree tells whether the lease was free when observed: taking it is
// then not worth a notice that someone holds it.
func (e *earlyReadAhead) leaseFree() bool { return e != nil && e.obs.Free() }

// claim is the read-ahead for a drive of p under held, if no process of
// Upshift held the lease since its reads began; otherwise it is dropped,
// and claim is nil. What others wrote meanwhile is checked under the
// lease before the snapshot serves (readAhead.confirm, which Apply calls
// once the plan's health checks passed; take refuses it unconfirmed).
func (e *earlyReadAhead) claim(p *resolve.Plan, held *lease.Held) *readAhead {
	if e == nil {
		return nil
	}
	if e.plan != p || !held.TakenFrom(e.obs) {
		e.drop()
		return nil
	}
	return e.ahead
}

// drop stops an early read-ahead nobody will use.
func (e *earlyReadAhead) drop() {
	if e != nil {
		e.ahead.drop()
	}
}
