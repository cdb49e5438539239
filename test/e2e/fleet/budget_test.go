package fleet_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/controller"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

// outage is the sim with clusters the test takes down: each answers
// GetClusterStatus as the sim does for its next `grace` reads, then
// unavailable. onServiceIn runs inside a ServiceIn call, before the
// plugin answers it.
type outage struct {
	*sim.Sim
	mu          sync.Mutex
	down        map[string]bool
	grace       map[string]int
	onServiceIn func(id string)
}

func (o *outage) GetClusterStatus(ctx context.Context, id string) (pluginsdk.ClusterStatus, error) {
	s, err := o.Sim.GetClusterStatus(ctx, id)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.grace[id] > 0:
		o.grace[id]--
	case o.down[id]:
		s.Available = false
	}
	return s, err
}

func (o *outage) ServiceIn(ctx context.Context, id string) (pluginsdk.Operation, error) {
	if o.onServiceIn != nil {
		o.onServiceIn(id)
	}
	return o.Sim.ServiceIn(ctx, id)
}

func (o *outage) set(down bool, grace int, ids ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range ids {
		o.down[id], o.grace[id] = down, grace
	}
}

// requiredAvailableCount holds through a controller killed between a
// plugin call and its save, and through a cluster that stops serving just
// before another's service out:
//   - The controller is SIGKILLed right after the plugin answered the
//     first ServiceOut, before it saved the answer. The next controller
//     finds the operation by the request id saved before the call and
//     follows it: the plugin starts one ServiceOut for the cluster, not
//     two.
//   - Two of the three other clusters stop serving just after the
//     controller read them into its status cache (10 s), before the next
//     cluster's service out. The next cluster stays in service, held
//     back with the multicluster operator's message, until they serve
//     again; then the rollout ends.
func TestFleetBudgetHoldsThroughKillsAndOutages(t *testing.T) {
	t.Parallel()
	e := newMgmtEnv(t, 4*time.Minute, "fleet-budget", "fleet-budget-runs")
	s := newSim(t, sim.Config{Count: 4, NodePools: 1, Version: "1.30.0", Latency: map[string]time.Duration{
		sim.OpServiceOut: 2 * time.Second, sim.OpServiceIn: time.Second, sim.OpUpgradeMaster: time.Second, sim.OpUpgradeNodePool: time.Second}})
	ids := s.IDs()
	first, next, others := ids[0], ids[1], ids[2:]
	o := &outage{Sim: s, down: map[string]bool{}, grace: map[string]int{}}
	o.onServiceIn = func(id string) {
		if id == first {
			// Serving once more: for the read that fills the
			// controller's status cache once the first is done.
			o.set(true, 1, others...)
		}
	}
	f := e.fleets()
	addr := serveInsecure(t, o)

	killed := startControllerWith(t, e.mgmt, e.ns, e.runs, []string{controller.KillAfterCallEnv + "=" + string(v1alpha1.ActionServiceOut)})
	f.apply("budget", addr, ids, func(sp *v1alpha1.ClusterVersionSpec) {
		sp.RequiredAvailableCount = 2
		// maxUnavailable leaves the budget alone to hold the next
		// cluster back.
		unavailable := int32(len(ids))
		sp.Waves = []v1alpha1.Wave{{Name: "all", Clusters: ids, MaxConcurrency: 1, MaxUnavailable: &unavailable}}
	})
	select {
	case <-killed.done:
	case <-time.After(time.Minute):
		t.Fatalf("the controller did not kill itself after the first ServiceOut:\n%s", killed.out.String())
	}
	saved := f.get("budget").Status.Clusters[0].Operation
	if saved == nil || saved.Action != v1alpha1.ActionServiceOut || saved.RequestID == "" || saved.ID != "" {
		t.Fatalf("after the kill the status holds %+v for %s; want the ServiceOut's intent (a request id, no operation id)", saved, first)
	}

	startController(t, e.mgmt, e.ns, e.runs)
	waitFor(t, time.Minute, "the first cluster to be done", func() bool {
		return f.get("budget").Status.Clusters[0].Phase == v1alpha1.ClusterDone
	})
	if n := s.Started(first, sim.OpServiceOut); n != 1 {
		t.Errorf("%s: the plugin started %d ServiceOut operations, want 1 (the call was sent again after the kill)", first, n)
	}

	// Held back while only the first cluster serves beside it.
	held := time.Now()
	for time.Since(held) < 5*time.Second {
		if st, _ := s.GetClusterStatus(e.ctx, next); st.Service != pluginsdk.ServiceIn {
			t.Fatalf("%s was taken out of service while only %s served besides it (requiredAvailableCount 2)", next, first)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if msg := f.get("budget").Status.Clusters[1].Message; !strings.Contains(msg, "less than required available count: 2") {
		t.Errorf("%s's message is %q, want the multicluster operator's ClusterUnavailable one", next, msg)
	}

	o.set(false, 0, others...)
	waitFor(t, 2*time.Minute, "the rollout to succeed", func() bool {
		return f.get("budget").Status.Phase == v1alpha1.FleetSucceeded
	})
	for _, id := range ids {
		if n := s.Started(id, sim.OpServiceOut); n != 1 {
			t.Errorf("%s: %d ServiceOut operations, want 1", id, n)
		}
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", timeout, what)
		}
	}
}
