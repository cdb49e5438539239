package runner

import (
	"context"
	"errors"
	"sync"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// earlyReadAhead is what ReadAhead begins for the Apply that follows,
// beside the preflight, which on a platform of many CRDs waits on the
// API server as long as the reads do: the first stage's snapshot of a
// new run, and the lease with the runs listed under it.
//
// The snapshot (ahead) is read before the lease is held. What it read
// is as good as a read under the lease only if no process of Upshift
// held the lease since the reads began (the lease is observed, released,
// just before they begin, and the take must have replaced that very
// record: lease.Held.TakenFrom) and no object it holds moved since
// (checked under the lease: readAhead.confirm). Otherwise the backup
// reads under the lease, as always.
//
// The lease is taken as soon as it is seen released, beside the reads:
// a take is two round trips, and the runs' listing under it two more,
// which Apply then waits for no longer. Taking it changes nothing of
// the platform; a plan that preflight refuses gives it back (Close).
type earlyReadAhead struct {
	plan     *Resolved
	observed chan struct{} // closed once obs is read (or could not be)
	obs      lease.Observation
	ahead    *readAhead

	taken chan struct{} // closed once the take ended, whether or not it took the lease
	// Set before taken is closed. held is nil when the lease was not
	// taken; runs are listed under it, for a new run only (absent: the
	// plan's run was not there at the observation).
	held    *lease.Held
	absent  bool
	runs    []v1alpha1.UpgradeRun
	runsErr error
	mu      sync.Mutex
	claimed bool // Apply took held over
}

// ReadAhead begins reading, and encoding, the first stage's snapshot of a
// new run of the plan, and taking the lease, for the Apply of that plan
// that follows on this session (Close gives back what no Apply used). It
// reads nothing for a plan whose run is there already (a resume takes no
// such snapshot), and neither reads nor takes anything while another
// process holds the lease.
func (s *Session) ReadAhead(ctx context.Context, p *Resolved) {
	ctx, cancel := context.WithCancel(ctx)
	e := &earlyReadAhead{plan: p, observed: make(chan struct{}), ahead: newReadAhead(cancel), taken: make(chan struct{})}
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
			_, err := s.store.GetResource(ctx, p.Plan.Name)
			exists <- !errors.Is(err, runstore.ErrNotFound)
		}()
		obs, err := lease.Observe(ctx, s.cs, s.opts.Namespace, lease.DefaultName)
		e.obs = obs
		close(e.observed)
		if err != nil || !obs.Free() {
			close(e.taken)
			return
		}
		found := <-exists
		go e.take(ctx, s, !found)
		if found {
			return
		}
		// From the API server's cache: confirm reads what moved since,
		// the cache's lag included, before the snapshot serves.
		a := s.newActor(p, s.deps)
		e.ahead.readAndEncode(ctx, a, p, a.backups.TakeCached)
	}()
}

// take takes the lease, seen released a moment ago, and lists the runs
// under it for a new run's prepare. It gives up after one renewal
// period: someone took the lease first, and Apply's own take waits for
// it and says who holds it.
func (e *earlyReadAhead) take(ctx context.Context, s *Session, absent bool) {
	defer close(e.taken)
	tctx, cancel := context.WithTimeout(ctx, s.opts.LeaseRenew)
	defer cancel()
	held, err := s.takeLease(tctx, e.plan.Plan.Name)
	if err != nil {
		return
	}
	e.held, e.absent = held, absent
	if absent {
		e.runs, e.runsErr = s.store.List(held.Context())
	}
}

// lease is the lease taken beside the reads, for Apply of p to drive
// with: nil when none was taken, or it is lost already, or it was
// taken for another plan (its holder's identity names the run).
func (e *earlyReadAhead) lease(ctx context.Context, p *Resolved) *lease.Held {
	if e == nil {
		return nil
	}
	select {
	case <-e.taken:
	case <-ctx.Done():
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.held == nil {
		return nil
	}
	if e.plan != p || e.held.Context().Err() != nil {
		// Given back now: Apply's own take would wait on it.
		e.held.Release()
		e.held = nil
		return nil
	}
	e.claimed = true
	return e.held
}

// listed are the runs listed under the lease Apply took over (lease),
// when the plan's run was not among them: prepare needs no list of its
// own then. Not for a run that is there: its record may have changed
// since (an approval, an abort request), and prepare saves it.
func (e *earlyReadAhead) listed() ([]v1alpha1.UpgradeRun, bool) {
	if e == nil || !e.claimed || !e.absent || e.runsErr != nil {
		return nil, false
	}
	for _, r := range e.runs {
		if r.Name == e.plan.Plan.Name {
			return nil, false
		}
	}
	return e.runs, true
}

// snapshot is what the early read-ahead of p read, once its reads ended:
// nil when there is none, it read nothing, or ctx ended first.
func (e *earlyReadAhead) snapshot(ctx context.Context, p *Resolved) *backup.Snapshot {
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
func (e *earlyReadAhead) claim(p *Resolved, held *lease.Held) *readAhead {
	if e == nil {
		return nil
	}
	if e.plan != p || !held.TakenFrom(e.obs) {
		e.drop()
		return nil
	}
	return e.ahead
}

// drop stops an early read-ahead nobody will use, and gives back the
// lease taken beside it unless Apply took it over.
func (e *earlyReadAhead) drop() {
	if e == nil {
		return
	}
	e.ahead.drop() // ends a take still under way
	<-e.taken
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.held != nil && !e.claimed {
		e.held.Release()
		e.held = nil
	}
}
