package runner

import (
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/lease"
)

// An abort that finds the lease held for another run waits for it; when
// a driver takes the lease for the aborted run meanwhile (a controller's
// next reconcile took it up), the abort asks that driver to stop, as it
// does one it finds at once, instead of failing for the held lease.
func TestAbortAsksADriverThatTookTheRunMeanwhile(t *testing.T) {
	f := newFixture(t)
	if err := f.s.ready(f.ctx); err != nil {
		t.Fatal(err)
	}
	const name = "abort-meanwhile"
	savedRun(t, f, name)

	// The lease is another run's, renewed; half a second into the
	// abort's wait, the same holder drives the aborted run.
	holder := func(run string) string { return "ops@ctl pid 1 (run " + run + ") [0a1b]" }
	now := metav1.NewMicroTime(time.Now())
	leases := f.cs.CoordinationV1().Leases(f.runsNS)
	if _, err := leases.Create(f.ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: lease.DefaultName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder("other-run")), LeaseDurationSeconds: ptr.To[int32](4), AcquireTime: &now, RenewTime: &now}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		began := time.Now()
		for tick := time.NewTicker(300 * time.Millisecond); ; {
			select {
			case <-stop:
				tick.Stop()
				return
			case <-tick.C:
			}
			l, err := leases.Get(f.ctx, lease.DefaultName, metav1.GetOptions{})
			if err != nil {
				continue
			}
			if time.Since(began) > 500*time.Millisecond {
				l.Spec.HolderIdentity = ptr.To(holder(name))
			}
			l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
			_, _ = leases.Update(f.ctx, l, metav1.UpdateOptions{})
			// The driver of the aborted run stops when asked.
			if r, err := f.s.store.Get(f.ctx, name); err == nil && r.Status.AbortRequested && r.Status.Phase == v1alpha1.RunRunning {
				if engine.Abort(r, "an operator", time.Now()) == nil {
					_ = f.s.store.Save(f.ctx, r)
				}
			}
		}
	}()

	res, err := f.s.Abort(f.ctx, name)
	if err != nil || !errors.Is(res.Stopped, ErrAborted) {
		t.Fatalf("Abort = %+v, %v; want the run aborted by the driver that took it up", res, err)
	}
}
