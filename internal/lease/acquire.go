package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
)

// ErrHeld: another process holds the lease and keeps renewing it.
var ErrHeld = errors.New("lease held by another process")

// HeldError refuses an Acquire and names the holder. errors.Is(err, ErrHeld).
type HeldError struct {
	Lease  string // namespace/name
	Holder Identity
	Waited time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("lease %s held by another process: %s, still renewing after %s",
		e.Lease, e.Holder, e.Waited.Round(100*time.Millisecond))
}

func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Acquire takes the lease. When another process holds it, Acquire waits
// about one lease duration: if the holder keeps renewing, it returns a
// *HeldError naming it; if the holder stopped renewing (it was killed),
// the lease expires and Acquire takes it over. It returns at once on an
// error no retry cures (forbidden, missing namespace) and with ctx's error
// when ctx ends first. The lease outlives ctx: only Release or a loss ends
// it.
//
// The takeover never reads the holder's renewTime: client-go counts the
// lease expired once the record it observed has not changed for a duration
// by this process's clock (its observedTime), and so does the wait below
// (lock.observed). Both measure a span on one clock, so a holder whose
// clock is skewed cannot make us take its lease early or late.
func Acquire(ctx context.Context, cs kubernetes.Interface, cfg Config) (*Held, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	desc := cfg.Namespace + "/" + cfg.Name
	lock := newGuardedLock(&rl.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
		Client:     cs.CoordinationV1(),
		LockConfig: rl.ResourceLockConfig{Identity: holderIdentity(cfg.Identity, newNonce())},
		Labels:     map[string]string{"app.kubernetes.io/managed-by": "upshift"},
	})
	h := newHeld(ctx, cfg, lock)
	started := make(chan struct{})
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            desc,
		LeaseDuration:   cfg.Duration,
		RenewDeadline:   cfg.renewDeadline(),
		RetryPeriod:     cfg.RenewEvery,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				lock.setLeading(h.stolen)
				close(started)
			},
			OnStoppedLeading: h.stoppedLeading,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", desc, err)
	}
	go func() {
		defer close(h.done)
		le.Run(h.electCtx)
	}()

	begin := time.Now()
	timer := time.NewTimer(cfg.Duration + cfg.RenewEvery)
	defer timer.Stop()
	extended := false
	for {
		select {
		case <-started:
			go h.watch()
			return h, nil
		case err := <-lock.permanent:
			h.abandon()
			return nil, fmt.Errorf("take lease %s: %w", desc, err)
		case <-ctx.Done():
			h.abandon()
			return nil, fmt.Errorf("take lease %s: %w", desc, ctx.Err())
		case <-timer.C:
		}
		holder, unchanged, lastErr := lock.observed()
		if !extended && holder != "" && unchanged >= cfg.Duration {
			// The holder stopped renewing: its lease has expired, and the
			// elector takes it on one of its next tries (jittered).
			extended = true
			timer.Reset(3 * cfg.RenewEvery)
			continue
		}
		select {
		case <-started: // taken just now
			go h.watch()
			return h, nil
		default:
		}
		h.abandon()
		waited := time.Since(begin)
		switch {
		case holder != "":
			return nil, &HeldError{Lease: desc, Holder: parseHolder(holder), Waited: waited}
		case lastErr != nil:
			return nil, fmt.Errorf("take lease %s: not taken within %s: %w", desc, waited.Round(time.Millisecond), lastErr)
		default:
			return nil, fmt.Errorf("take lease %s: not taken within %s", desc, waited.Round(time.Millisecond))
		}
	}
}
