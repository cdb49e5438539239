package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
)

// fleetStatus is one fleet's status as this controller last decided it,
// and its writer to the API server.
//
// Why the save is behind the reconcile and not in it: a fleet's status
// holds a line per cluster, and with a thousand clusters the API server
// takes hundreds of milliseconds to store the object however small the
// patch. Saved in the reconcile, that time sat between every operation's
// end and the start of the next (reconciles of one fleet run one after
// the other), seven times per cluster. The leader is the status's only
// writer, so what it decided is the truth while it runs: the next
// reconcile steps from it at once, and the writer saves the latest
// status whenever the API server is ready for it, several decisions in
// one write when they come faster than it stores them.
//
// A crash loses what was decided and not yet saved, as a crash between a
// plugin call and its save always could: what is saved is a past state of
// the same rollout, and a restarted controller reads it back and asks the
// plugin. A save that fails stops the rollout (the next reconcile saves in
// line and returns the error), so it never runs on with nothing recorded.
type fleetStatus struct {
	key types.NamespacedName
	uid types.UID

	mu sync.Mutex
	// saved is the status the API server last stored; decided, what
	// was decided last (saved, being written, or waiting: unsaved).
	saved, decided v1alpha1.ClusterVersionStatus
	unsaved        bool
	// draining: the writer goroutine runs (it writes, then pauses);
	// writing: a write is in flight, the writer's or one in line. One
	// write at a time, each a patch from saved.
	draining bool
	writing  bool
	failed   error
	// idle is broadcast when a write or the writer ends.
	idle *sync.Cond
}

func newFleetStatus(key types.NamespacedName, uid types.UID, saved v1alpha1.ClusterVersionStatus) *fleetStatus {
	s := &fleetStatus{key: key, uid: uid, saved: saved, decided: saved}
	s.idle = sync.NewCond(&s.mu)
	return s
}

// current is the status to decide from: the last decided, whether or not
// it is saved yet. The caller owns the copy.
func (s *fleetStatus) current() v1alpha1.ClusterVersionStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.decided.DeepCopy()
}

// failure is the error of the last save, until one succeeds.
func (s *fleetStatus) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// fleetStatusWriter writes fleets' statuses as JSON patches of what
// changed since the last write.
type fleetStatusWriter struct {
	client client.Client
	log    logr.Logger
	// wake asks for a reconcile of a fleet whose save failed, so the
	// failure shows and the rollout stops.
	wake func(types.NamespacedName)
}

// record makes st the fleet's decided status and starts a writer unless
// one runs (it takes the new status when its write ends).
func (w *fleetStatusWriter) record(s *fleetStatus, st v1alpha1.ClusterVersionStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decided, s.unsaved = st, true
	if s.draining {
		return
	}
	s.draining = true
	go w.drain(s)
}

// drain writes the decided status until it is saved. Record replaces
// decided rather than changing it, so a write reads its copy unlocked.
func (w *fleetStatusWriter) drain(s *fleetStatus) {
	for {
		s.mu.Lock()
		for s.writing { // a write in line (saveNow)
			s.idle.Wait()
		}
		if !s.unsaved || s.failed != nil {
			s.draining = false
			s.idle.Broadcast()
			s.mu.Unlock()
			return
		}
		next, base := s.decided, s.saved
		s.unsaved, s.writing = false, true
		s.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		began := time.Now()
		stored, err := w.write(ctx, s.key, base, next)
		took := time.Since(began)
		cancel()

		s.mu.Lock()
		s.writing = false
		if err != nil {
			s.failed, s.unsaved = err, true // saved in line by the next reconcile
		} else {
			s.saved = stored
		}
		s.idle.Broadcast()
		s.mu.Unlock()
		if err != nil {
			w.log.Error(err, "save a fleet's status", "clusterversion", s.key)
			w.wake(s.key)
			continue
		}
		// As long again before the next write: back to back, the writes
		// of a large fleet would keep the API server storing its status
		// all the time, and the rollout's own calls would wait on it.
		// Decisions made meanwhile go out together. A save in line
		// (saveNow) does not wait for the pause.
		time.Sleep(took)
	}
}

// saveNow writes the latest status in the caller's goroutine, after any
// write in flight: the reconcile's way to surface (and retry) a failed
// save before it decides anything more, and to save intents before the
// plugin is called.
func (w *fleetStatusWriter) saveNow(ctx context.Context, s *fleetStatus) error {
	s.mu.Lock()
	for s.writing {
		s.idle.Wait()
	}
	next, base, unsaved := s.decided, s.saved, s.unsaved
	if !unsaved {
		s.failed = nil
		s.mu.Unlock()
		return nil
	}
	s.unsaved, s.writing = false, true
	s.mu.Unlock()
	stored, err := w.write(ctx, s.key, base, next)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writing = false
	s.idle.Broadcast()
	if err != nil {
		s.failed, s.unsaved = err, true
		return err
	}
	// Only the reconcile records, and it is here: nothing newer came.
	s.failed, s.saved = nil, stored
	return nil
}

// saveInLine makes st the fleet's decided status and writes it in the
// caller's goroutine, after any write in flight.
func (w *fleetStatusWriter) saveInLine(ctx context.Context, s *fleetStatus, st v1alpha1.ClusterVersionStatus) error {
	s.mu.Lock()
	s.decided, s.unsaved = st, true
	s.mu.Unlock()
	return w.saveNow(ctx, s)
}

// flush waits for the fleet's writer, up to the context's end.
func (w *fleetStatusWriter) flush(ctx context.Context, s *fleetStatus) {
	done := make(chan struct{})
	go func() {
		s.mu.Lock()
		for s.writing || s.draining {
			s.idle.Wait()
		}
		s.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// write patches the fleet's status from base to st; it returns the status
// as stored.
func (w *fleetStatusWriter) write(ctx context.Context, key types.NamespacedName, base, st v1alpha1.ClusterVersionStatus) (v1alpha1.ClusterVersionStatus, error) {
	patch, err := fleet.StatusPatch(base, st)
	if err != nil || patch == nil {
		return st, err
	}
	cv := &v1alpha1.ClusterVersion{}
	cv.Namespace, cv.Name = key.Namespace, key.Name
	if err := w.client.Status().Patch(ctx, cv, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return base, fmt.Errorf("save the status of ClusterVersion %s: %w", key, err)
	}
	return cv.Status, nil
}

// withoutFleetStatus is the cache's transform of ClusterVersions: their
// status goes (see fleetStatus).
func withoutFleetStatus(obj any) (any, error) {
	if cv, ok := obj.(*v1alpha1.ClusterVersion); ok {
		cv.Status = v1alpha1.ClusterVersionStatus{}
	}
	return obj, nil
}
