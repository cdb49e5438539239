package fleet_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

// Two fleets whose plugins number their operations alike (two sims,
// each from sim-op-1, with the same cluster ids): the slow fleet's
// control plane upgrade sim-op-2 runs on, waited on, while the other
// fleet's own sim-op-2 ends in seconds. The fast fleet is woken by its
// own wait (it does not sit out the 30s backstop behind the other's),
// and the slow fleet is not told its operation ended.
func TestFleetsWithAlikeOperationIDsWaitApart(t *testing.T) {
	t.Parallel()
	e := newMgmtEnv(t, 3*time.Minute, "fleet-waits", "fleet-waits-runs")
	startController(t, e.mgmt, e.ns, e.runs)

	simWith := func(master time.Duration) *sim.Sim {
		return newSim(t, sim.Config{Count: 2, NodePools: 1, Version: "1.30.0", Latency: map[string]time.Duration{sim.OpUpgradeMaster: master}})
	}
	slow, fast := simWith(10*time.Minute), simWith(3*time.Second)
	f := e.fleets()
	f.apply("slow", serveInsecure(t, slow), slow.IDs())
	op := f.waitOperation("slow", v1alpha1.ActionUpgradeMaster)

	began := time.Now()
	f.apply("fast", serveInsecure(t, fast), fast.IDs())
	if fastOp := f.waitOperation("fast", v1alpha1.ActionUpgradeMaster); fastOp.ID != op.ID {
		t.Fatalf("the fast fleet's control plane upgrade is %s, the slow one's %s: the test needs them alike", fastOp.ID, op.ID)
	}
	// Two clusters, each a 3s control plane upgrade: about 7s when each
	// wait wakes its own fleet; over 30s when one waits on the other's.
	for f.get("fast").Status.Phase != v1alpha1.FleetSucceeded {
		if time.Since(began) > 20*time.Second {
			t.Fatalf("the fast fleet did not succeed within 20s (its waits were taken for the slow fleet's?): %+v", f.get("fast").Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	st := f.get("slow").Status
	if e := st.Clusters[0]; e.Operation == nil || e.Operation.ID != op.ID || st.Phase != v1alpha1.FleetProgressing {
		t.Errorf("the slow fleet moved on: phase %s, first cluster %+v; want its operation %s still in flight", st.Phase, e, op.ID)
	}
	if v, _ := slow.GetVersion(e.ctx, slow.IDs()[0]); v.Master != "1.30.0" {
		t.Errorf("the slow plugin's cluster runs %s", v.Master)
	}
}

// fleets applies and reads ClusterVersions of one namespace.
type fleets struct {
	t   *testing.T
	ctx context.Context
	dyn dynamic.Interface
	ns  string
}

// apply makes a ClusterVersion of ids, to 1.31.0, over a plain-text
// plugin.
func (f *fleets) apply(name, addr string, ids []string, edits ...func(*v1alpha1.ClusterVersionSpec)) {
	f.t.Helper()
	cv := &v1alpha1.ClusterVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.ClusterVersionKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 1, OpsEndpoint: v1alpha1.OpsEndpoint{Endpoint: addr, Insecure: true}},
	}
	for _, id := range ids {
		cv.Spec.Clusters = append(cv.Spec.Clusters, v1alpha1.FleetCluster{ID: id, Version: "1.31.0"})
	}
	for _, edit := range edits {
		edit(&cv.Spec)
	}
	m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(cv)
	delete(m, "status")
	data, _ := json.Marshal(m)
	force := true
	if _, err := f.dyn.Resource(clusterVersions).Namespace(f.ns).Patch(f.ctx, name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "fleet-test", Force: &force}); err != nil {
		f.t.Fatalf("apply %s: %v", name, err)
	}
}

func (f *fleets) get(name string) *v1alpha1.ClusterVersion {
	f.t.Helper()
	u, err := f.dyn.Resource(clusterVersions).Namespace(f.ns).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	cv := &v1alpha1.ClusterVersion{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cv); err != nil {
		f.t.Fatal(err)
	}
	return cv
}

// waitOperation waits until the fleet's first cluster has an operation
// of action in flight, and returns it.
func (f *fleets) waitOperation(name string, action v1alpha1.FleetAction) v1alpha1.PluginOperation {
	f.t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if st := f.get(name).Status; len(st.Clusters) > 0 {
			// The plugin's answer saved, not only the intent saved before
			// the call (its ID is empty until then).
			if op := st.Clusters[0].Operation; op != nil && op.Action == action && op.ID != "" {
				return *op
			}
		}
	}
	f.t.Fatalf("%s: no %s in flight within a minute: %+v", name, action, f.get(name).Status)
	return v1alpha1.PluginOperation{}
}

// serveInsecure serves impl in plain text on a loopback port until the
// test ends.
func serveInsecure(t *testing.T, impl pluginsdk.Cluster) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pluginsdk.Serve(ctx, lis, impl, pluginsdk.Insecure()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the plugin's server: %v", err)
		}
	})
	return lis.Addr().String()
}
