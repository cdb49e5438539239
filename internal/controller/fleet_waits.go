package controller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// maxWait bounds one WaitOperation call; the wait starts again after it
// while the operation runs.
const maxWait = 5 * time.Minute

// fleetWaits waits on a fleet's operations in flight with the plugin's
// WaitOperation, where it serves it, and wakes the fleet's reconcile the
// moment one ends: a rollout then moves as fast as its operations do,
// where polling would add up to a poll interval per operation. Without
// WaitOperation the reconciler polls. It runs with the manager (Start).
type fleetWaits struct {
	ctx  context.Context
	stop context.CancelFunc
	wake chan event.GenericEvent
	// poll is how often an operation waited on is asked about anyway,
	// for its progress.
	poll time.Duration
	mu   sync.Mutex
	// waiting holds the operations waited on; asked, when each was last
	// left to the reconcile to ask about; ended, the last reports of
	// those seen ending, until a reconcile takes them.
	waiting map[opKey]bool
	asked   map[opKey]time.Time
	ended   map[opKey]pluginsdk.OperationReport
}

// opKey names an operation: plugins number their operations as they
// like (the sim from 1 in each process), so an id alone may name
// operations of several fleets, or of several clusters of one.
type opKey struct {
	fleet       types.NamespacedName
	cluster, op string
}

func newFleetWaits(poll time.Duration) *fleetWaits {
	ctx, cancel := context.WithCancel(context.Background())
	return &fleetWaits{ctx: ctx, stop: cancel, wake: make(chan event.GenericEvent, 1024), poll: poll,
		waiting: map[opKey]bool{}, asked: map[opKey]time.Time{}, ended: map[opKey]pluginsdk.OperationReport{}}
}

// of is the fleet.Watch of one fleet.
func (w *fleetWaits) of(fleet types.NamespacedName) fleetWatch { return fleetWatch{w, fleet} }

// fleetWatch is one fleet's view of the waits.
type fleetWatch struct {
	w     *fleetWaits
	fleet types.NamespacedName
}

// Ended gives, once, the last report of an operation seen ending.
func (f fleetWatch) Ended(cluster, op string) (pluginsdk.OperationReport, bool) {
	k := opKey{f.fleet, cluster, op}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	rep, ok := f.w.ended[k]
	delete(f.w.ended, k)
	return rep, ok
}

// Quiet tells an operation waited on and asked about within the poll
// interval: its wait would have ended had it.
func (f fleetWatch) Quiet(cluster, op string, now time.Time) bool {
	k := opKey{f.fleet, cluster, op}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if !f.w.waiting[k] {
		return false
	}
	if t, ok := f.w.asked[k]; ok && now.Sub(t) < f.w.poll {
		return true
	}
	f.w.asked[k] = now
	return false
}

// forget drops the ends a deleted fleet did not take; its waits end
// with their operations (or the next maxWait).
func (w *fleetWaits) forget(fleet types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.ended {
		if k.fleet == fleet {
			delete(w.ended, k)
		}
	}
}

// Start runs until the manager stops, then ends every wait.
func (w *fleetWaits) Start(ctx context.Context) error {
	<-ctx.Done()
	w.stop()
	return nil
}

// follow starts waiting on each operation in flight not waited on yet.
func (w *fleetWaits) follow(p fleet.Plugin, key types.NamespacedName, st v1alpha1.ClusterVersionStatus) {
	for _, e := range st.Clusters {
		op := e.Operation
		if op == nil || op.ID == "" { // "": its call's answer is being looked up
			continue
		}
		k := opKey{key, e.ID, op.ID}
		w.mu.Lock()
		started := w.waiting[k]
		if !started {
			// The step that started it, or re-attached to it, has just
			// reported on it: the poll's interval counts from now.
			w.waiting[k], w.asked[k] = true, time.Now()
		}
		w.mu.Unlock()
		if !started {
			go w.wait(p, k, pluginsdk.Operation{ID: op.ID, Type: op.Type})
		}
	}
}

// wait waits on one operation and wakes the fleet when it ends.
func (w *fleetWaits) wait(p fleet.Plugin, k opKey, op pluginsdk.Operation) {
	defer func() {
		w.mu.Lock()
		delete(w.waiting, k)
		delete(w.asked, k)
		w.mu.Unlock()
	}()
	for {
		ctx, cancel := context.WithTimeout(w.ctx, maxWait)
		rep, err := p.Wait(ctx, k.cluster, op)
		cancel()
		switch {
		case w.ctx.Err() != nil:
			return
		case err != nil:
			// The plugin is down or failed the call: the reconcile's poll
			// takes over, and says so in the status.
			w.send(k.fleet)
			return
		case rep.Status != pluginsdk.OperationRunning:
			w.mu.Lock()
			w.ended[k] = rep
			w.mu.Unlock()
			w.send(k.fleet)
			return
		}
	}
}

func (w *fleetWaits) send(key types.NamespacedName) {
	cv := &v1alpha1.ClusterVersion{}
	cv.Namespace, cv.Name = key.Namespace, key.Name
	select {
	case w.wake <- event.GenericEvent{Object: cv}:
	case <-w.ctx.Done():
	}
}
