package lease

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/upshift-dev/upshift/internal/kube"
)

// errNotOurs refuses a release of a lease that someone else holds now.
var errNotOurs = errors.New("not releasing a lease held by another process")

// guardedLock wraps client-go's LeaseLock to see what the elector sees:
// client-go only logs, and Acquire must say why it failed, Held must know
// when it last renewed, and a lease taken by another process must end
// ours at once.
type guardedLock struct {
	rl.Interface

	mu         sync.Mutex
	holder     string    // holderIdentity last read or written
	lastRaw    []byte    // the record last read
	lastChange time.Time // when a read found the record changed
	lastRenew  time.Time // when our last successful write was sent
	lastErr    error
	leading    bool
	// replaced is the record the take replaced, as last read before
	// it; nil until the take, or when the take created the lease.
	replaced []byte
	// onStolen is called when a read finds another holder while we lead.
	onStolen func(holder string)
	// permanent gets an error no retry cures (forbidden, no namespace).
	permanent chan error
}

func newGuardedLock(inner rl.Interface) *guardedLock {
	return &guardedLock{Interface: inner, permanent: make(chan error, 1)}
}

func (g *guardedLock) Get(ctx context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	rec, raw, err := g.Interface.Get(ctx)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			g.noteErr(err, false)
		}
		return rec, raw, err
	}
	g.mu.Lock()
	if !bytes.Equal(raw, g.lastRaw) {
		g.lastRaw = append(g.lastRaw[:0], raw...)
		g.lastChange = time.Now()
	}
	g.holder = rec.HolderIdentity
	g.lastErr = nil
	stolen := g.leading && rec.HolderIdentity != g.Identity()
	onStolen := g.onStolen
	g.mu.Unlock()
	if stolen && onStolen != nil {
		onStolen(rec.HolderIdentity)
	}
	return rec, raw, nil
}

func (g *guardedLock) Create(ctx context.Context, rec rl.LeaderElectionRecord) error {
	sent := time.Now()
	err := g.Interface.Create(ctx, rec)
	// Create fails with NotFound only when the namespace is missing.
	g.noteWrite(rec, sent, err, apierrors.IsNotFound(err))
	return err
}

func (g *guardedLock) Update(ctx context.Context, rec rl.LeaderElectionRecord) error {
	if rec.HolderIdentity == "" {
		// client-go releases when it last saw itself as holder, even if
		// renewals failed since and another process took over meanwhile;
		// the Get just before the release tells.
		g.mu.Lock()
		ours := g.holder == g.Identity()
		g.mu.Unlock()
		if !ours {
			return errNotOurs
		}
	}
	sent := time.Now()
	err := g.Interface.Update(ctx, rec)
	if rec.HolderIdentity == "" {
		err = g.releaseAgain(ctx, rec, err)
	}
	g.noteWrite(rec, sent, err, false)
	if err == nil && rec.HolderIdentity == g.Identity() {
		// The elector updates only the record it has just read (the
		// update is conditional on its version): the one it replaced.
		g.mu.Lock()
		if !g.leading && g.replaced == nil {
			g.replaced = bytes.Clone(g.lastRaw)
		}
		g.mu.Unlock()
	}
	return err
}

// releaseAgain retries a release refused for a newer version: a renewal
// that the release cancelled may still land after the elector's read
// just before it. Read again, and release what is still ours; a release
// that fails leaves the lease held until it expires, and every other
// driver waiting that long.
func (g *guardedLock) releaseAgain(ctx context.Context, rec rl.LeaderElectionRecord, err error) error {
	for range 3 {
		if !apierrors.IsConflict(err) {
			return err
		}
		cur, _, gerr := g.Get(ctx)
		if gerr != nil {
			return gerr
		}
		if cur.HolderIdentity != g.Identity() {
			return errNotOurs
		}
		err = g.Interface.Update(ctx, rec)
	}
	return err
}

func (g *guardedLock) noteWrite(rec rl.LeaderElectionRecord, sent time.Time, err error, permanent bool) {
	if err != nil {
		g.noteErr(err, permanent)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holder = rec.HolderIdentity
	g.lastErr = nil
	if rec.HolderIdentity == g.Identity() {
		g.lastRenew = sent
	}
}

func (g *guardedLock) noteErr(err error, permanent bool) {
	g.mu.Lock()
	g.lastErr = err
	g.mu.Unlock()
	if permanent || !kube.Transient(err) {
		select {
		case g.permanent <- err:
		default:
		}
	}
}

// setLeading marks that the elector took the lease; from now on another
// holder in a read means we lost it.
func (g *guardedLock) setLeading(onStolen func(holder string)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.leading = true
	g.onStolen = onStolen
}

// takenFrom is the record the take replaced (nil: none, or not taken).
func (g *guardedLock) takenFrom() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.replaced
}

func (g *guardedLock) renewedAt() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lastRenew
}

// observed is what the elector last saw of another holder: its identity,
// how long its record has not changed, and the last error.
func (g *guardedLock) observed() (holder string, unchanged time.Duration, lastErr error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.lastChange.IsZero() {
		unchanged = time.Since(g.lastChange)
	}
	return g.holder, unchanged, g.lastErr
}
