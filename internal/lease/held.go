package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrLost is the cause of Held.Context once the lease is lost.
var ErrLost = errors.New("lease lost")

// errReleased is the cause of Held.Context after Release.
var errReleased = errors.New("lease released")

// Held is a lease this process holds and renews in the background.
type Held struct {
	cfg  Config
	lock *guardedLock

	electCtx  context.Context // the elector runs until this ends
	stopElect context.CancelFunc
	ctx       context.Context // what callers write with
	cancel    context.CancelCauseFunc

	lost        chan struct{}
	done        chan struct{} // the elector has returned (and released)
	lostOnce    sync.Once
	releaseOnce sync.Once
	releasing   atomic.Bool
}

func newHeld(parent context.Context, cfg Config, lock *guardedLock) *Held {
	base := context.WithoutCancel(parent)
	h := &Held{cfg: cfg, lock: lock, lost: make(chan struct{}), done: make(chan struct{})}
	h.electCtx, h.stopElect = context.WithCancel(base)
	h.ctx, h.cancel = context.WithCancelCause(base)
	return h
}

// Lost is closed when the lease was lost: renewal failed past its deadline
// or another process took the lease. The holder must stop writing at once.
// Release does not close it.
func (h *Held) Lost() <-chan struct{} { return h.lost }

// Context is cancelled when the lease is lost (cause wraps ErrLost) or
// released. Writes made with it stop with the lease.
func (h *Held) Context() context.Context { return h.ctx }

// Release gives the lease up, so the next Acquire by anyone succeeds at
// once. It returns when the Lease is free (or, after a loss, when the
// renewal has stopped). Calling it again does nothing.
func (h *Held) Release() {
	h.releaseOnce.Do(func() {
		h.releasing.Store(true)
		h.cancel(errReleased)
		h.stopElect()
		<-h.done
	})
}

// abandon stops an Acquire that did not succeed.
func (h *Held) abandon() {
	h.releasing.Store(true)
	h.stopElect()
	<-h.done
	h.cancel(errReleased)
}

func (h *Held) markLost(why error) {
	if h.releasing.Load() {
		return
	}
	h.lostOnce.Do(func() {
		h.cancel(why)
		close(h.lost)
		h.stopElect() // no renewal of a lease nobody writes with
	})
}

// stoppedLeading is client-go's OnStoppedLeading: renewal failed past its
// deadline (or the elector was stopped, which Release and markLost mark).
func (h *Held) stoppedLeading() {
	if h.lock.renewedAt().IsZero() {
		return // never led
	}
	h.markLost(h.lostError(fmt.Sprintf("renewal failed for %s", h.cfg.renewDeadline())))
}

// stolen is called when a read of the Lease names another holder.
func (h *Held) stolen(holder string) {
	h.markLost(fmt.Errorf("%w: lease %s/%s taken over by %s", ErrLost, h.cfg.Namespace, h.cfg.Name, parseHolder(holder)))
}

// watch counts the lease as lost once it went unrenewed for giveUp, even
// if client-go is still busy (its release, run before OnStoppedLeading,
// may wait on an unreachable API server).
func (h *Held) watch() {
	for {
		left := time.Until(h.lock.renewedAt().Add(h.cfg.giveUp()))
		if left <= 0 {
			h.markLost(h.lostError(fmt.Sprintf("not renewed for %s", h.cfg.giveUp())))
			return
		}
		t := time.NewTimer(left)
		select {
		case <-t.C:
		case <-h.ctx.Done():
			t.Stop()
			return
		}
	}
}

func (h *Held) lostError(what string) error {
	if _, _, lastErr := h.lock.observed(); lastErr != nil {
		return fmt.Errorf("%w: lease %s/%s %s (last error: %v)", ErrLost, h.cfg.Namespace, h.cfg.Name, what, lastErr)
	}
	return fmt.Errorf("%w: lease %s/%s %s", ErrLost, h.cfg.Namespace, h.cfg.Name, what)
}
