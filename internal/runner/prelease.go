package runner

import (
	"context"
	"errors"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// preLeaseRead is a read-ahead (readAhead) begun before the lease,
// beside the preflight, which on a platform of many CRDs waits on the
// API server as long as the reads do. What it read is as good as a read
// under the lease only if no process of Upshift held the lease since the
// reads began (the lease is observed, released, just before they begin,
// and the take must have replaced that very record: lease.Held.TakenFrom)
// and no object it holds moved since (checked under the lease:
// readAhead.confirm). Otherwise the backup reads under the lease, as
// always.
type preLeaseRead struct {
	plan     *resolve.Plan
	observed chan struct{} // closed once obs is read (or could not be)
	obs      lease.Observation
	ahead    *readAhead
}

// ReadAhead begins reading, and encoding, the first stage's snapshot of a
// new run of the plan, for the Apply of that plan that follows on this
// session. It reads nothing for a plan whose run is there already (a
// resume takes no such snapshot) or while another process holds the
// lease. Every driver that applies a plan (the CLI, the controller for a
// plan and a fleet's member plan, the server's app plan, catalog hops)
// calls it just before Preflight, so each takes the same path.
func (s *Session) ReadAhead(ctx context.Context, p *resolve.Plan) {
	ctx, cancel := context.WithCancel(ctx)
	e := &preLeaseRead{plan: p, observed: make(chan struct{}), ahead: newReadAhead(cancel)}
	e.ahead.cached = true
	s.preLease.drop()
	s.preLease = e
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
		e.ahead.readWith(ctx, s.newActor(p, s.deps).backups, p, backup.Cached)
	}()
}

// snapshot is what the read-ahead begun before the lease for p read, once its reads ended:
// nil when there is none, it read nothing, or ctx ended first.
func (e *preLeaseRead) snapshot(ctx context.Context, p *resolve.Plan) *backup.Snapshot {
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

// takePreLease hands the session's read-ahead begun before the lease to Apply, once its
// lease observation is in; nil when there is none.
func (s *Session) takePreLease(ctx context.Context) *preLeaseRead {
	e := s.preLease
	s.preLease = nil
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
func (e *preLeaseRead) leaseFree() bool { return e != nil && e.obs.Free() }

// claim is the read-ahead for a drive of p under held, if no process of
// Upshift held the lease since its reads began; otherwise it is dropped,
// and claim is nil. What others wrote meanwhile is checked under the
// lease before the snapshot serves (readAhead.confirm, which Apply calls
// once the plan's health checks passed; take refuses it unconfirmed).
func (e *preLeaseRead) claim(p *resolve.Plan, held *lease.Held) *readAhead {
	if e == nil {
		return nil
	}
	if e.plan != p || !held.TakenFrom(e.obs) {
		e.drop()
		return nil
	}
	return e.ahead
}

// drop stops a read-ahead nobody will use.
func (e *preLeaseRead) drop() {
	if e != nil {
		e.ahead.drop()
	}
}
