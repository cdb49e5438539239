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
	// waiting holds the operation ids waited on; asked, when each was
	// last left to the reconcile to ask about; ended, the last reports of
	// those seen ending, until a reconcile takes them.
	waiting map[string]bool
	asked   map[string]time.Time
	ended   map[string]pluginsdk.OperationReport
}

func newFleetWaits(poll time.Duration) *fleetWaits {
	ctx, cancel := context.WithCancel(context.Background())
	return &fleetWaits{ctx: ctx, stop: cancel, wake: make(chan event.GenericEvent, 1024), poll: poll,
		waiting: map[string]bool{}, asked: map[string]time.Time{}, ended: map[string]pluginsdk.OperationReport{}}
}

// Ended gives, once, the last report of an operation seen ending
// (fleet.Watch).
func (w *fleetWaits) Ended(op string) (pluginsdk.OperationReport, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rep, ok := w.ended[op]
	delete(w.ended, op)
	return rep, ok
}

// Quiet tells an operation waited on and asked about within the poll
// interval (fleet.Watch): its wait would have ended had it.
func (w *fleetWaits) Quiet(op string, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.waiting[op] {
		return false
	}
	if t, ok := w.asked[op]; ok && now.Sub(t) < w.poll {
		return true
	}
	w.asked[op] = now
	return false
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
		if op == nil {
			continue
		}
		w.mu.Lock()
		started := w.waiting[op.ID]
		if !started {
			// The step that started it, or re-attached to it, has just
			// reported on it: the poll's interval counts from now.
			w.waiting[op.ID], w.asked[op.ID] = true, time.Now()
		}
		w.mu.Unlock()
		if !started {
			go w.wait(p, key, e.ID, pluginsdk.Operation{ID: op.ID, Type: op.Type})
		}
	}
}

// wait waits on one operation and wakes the fleet when it ends.
func (w *fleetWaits) wait(p fleet.Plugin, key types.NamespacedName, cluster string, op pluginsdk.Operation) {
	defer func() {
		w.mu.Lock()
		delete(w.waiting, op.ID)
		delete(w.asked, op.ID)
		w.mu.Unlock()
	}()
	for {
		ctx, cancel := context.WithTimeout(w.ctx, maxWait)
		rep, err := p.Wait(ctx, cluster, op)
		cancel()
		switch {
		case w.ctx.Err() != nil:
			return
		case err != nil:
			// The plugin is down or failed the call: the reconcile's poll
			// takes over, and says so in the status.
			w.send(key)
			return
		case rep.Status != pluginsdk.OperationRunning:
			w.mu.Lock()
			w.ended[op.ID] = rep
			w.mu.Unlock()
			w.send(key)
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
