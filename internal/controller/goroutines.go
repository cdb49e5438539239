package controller

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// drivers is what a reconciler that drives work in goroutines shares with
// the manager: the context every drive derives from, the wait for them
// at shutdown, and the channel by which a drive wakes its object's
// reconcile. Both reconcilers (UpgradePlan, PlatformUpgrade) embed it; it
// is a manager Runnable, so a stopping manager interrupts the drives and
// waits until each has saved where it stopped.
type drivers struct {
	wake chan event.GenericEvent
	base context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

func newDrivers() drivers {
	base, stop := context.WithCancel(context.Background())
	return drivers{wake: make(chan event.GenericEvent, 256), base: base, stop: stop}
}

// Start waits for the manager to stop, then interrupts the drives and
// waits for them to save.
func (d *drivers) Start(ctx context.Context) error {
	<-ctx.Done()
	d.stop()
	d.wg.Wait()
	return nil
}

// NeedLeaderElection: only the leader drives.
func (d *drivers) NeedLeaderElection() bool { return true }

// wakeUp asks for a reconcile of obj. A wake-up after a transition never
// blocks the drive (when the queue of wake-ups is full, the one at the
// drive's end still comes); the one at the end (must) waits for room.
func (d *drivers) wakeUp(obj client.Object, must bool) {
	ev := event.GenericEvent{Object: obj}
	if must {
		select {
		case d.wake <- ev:
		case <-d.base.Done():
		}
		return
	}
	select {
	case d.wake <- ev:
	default:
	}
}
