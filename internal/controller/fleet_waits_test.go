package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

// Two fleets whose plugins (two sims, numbering from sim-op-1, with the
// same cluster ids) each have sim-op-1 in flight on sim-0001: the one
// that ends is given to its own fleet only, and each fleet's operation
// is waited on, not taken for the other's.
func TestWaitsAreKeyedByFleetClusterAndOperation(t *testing.T) {
	newSim := func(out time.Duration) fleet.Plugin {
		s, err := sim.New(sim.Config{Count: 1, Latency: map[string]time.Duration{sim.OpServiceOut: out}})
		if err != nil {
			t.Fatal(err)
		}
		return fleet.Adapt(s)
	}
	quick, slow := newSim(0), newSim(time.Hour)
	a, b := types.NamespacedName{Namespace: "n", Name: "a"}, types.NamespacedName{Namespace: "n", Name: "b"}
	st := func(p fleet.Plugin) v1alpha1.ClusterVersionStatus {
		op, err := p.ServiceOut(t.Context(), "sim-0001")
		if err != nil || op.ID != "sim-op-1" {
			t.Fatalf("service out: %+v, %v; want sim-op-1", op, err)
		}
		return v1alpha1.ClusterVersionStatus{Clusters: []v1alpha1.FleetClusterStatus{
			{ID: "sim-0001", Operation: &v1alpha1.PluginOperation{ID: op.ID, Type: op.Type}}}}
	}
	w := newFleetWaits(time.Minute)
	t.Cleanup(w.stop)
	// b's (slow) first: a's must still be waited on, and end.
	w.follow(slow, b, st(slow))
	w.follow(quick, a, st(quick))

	select {
	case ev := <-w.wake:
		if ev.Object.GetName() != "a" {
			t.Fatalf("woke fleet %s; want a, whose operation ended", ev.Object.GetName())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fleet a's operation ended and its fleet was not woken: its wait was taken for b's")
	}
	if rep, ok := w.of(b).Ended("sim-0001", "sim-op-1"); ok {
		t.Fatalf("fleet b was told its sim-op-1 ended (%+v): that was fleet a's", rep)
	}
	if rep, ok := w.of(a).Ended("sim-0001", "sim-op-1"); !ok || rep.Status != pluginsdk.OperationDone {
		t.Fatalf("fleet a: %+v, %t; want its operation's end, Done", rep, ok)
	}
	if _, ok := w.of(a).Ended("sim-0001", "sim-op-1"); ok {
		t.Error("an end was given twice")
	}
	// b's is still waited on: asked within the poll, it is quiet.
	now := time.Now()
	w.of(b).Quiet("sim-0001", "sim-op-1", now)
	if !w.of(b).Quiet("sim-0001", "sim-op-1", now) {
		t.Error("fleet b's operation is not waited on")
	}
	if w.of(a).Quiet("sim-0001", "sim-op-1", now) {
		t.Error("fleet a's ended operation is still quiet (b's wait taken for a's)")
	}
}
