package fleet_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/runstore"
	"github.com/upshift-dev/upshift/internal/steps/freeze"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

// A ClusterVersion deleted mid-rollout, while its member run on member1
// holds a freeze (in its pause) and the plugin upgrades sim-b's control
// plane: the deletion waits on the fleet's finalizer until the member run
// is aborted where it was (its record kept on the member, the freeze
// lifted, the member's run lease free), and an event names sim-b's
// operation, which the plugin goes on with. Nothing resumes the run
// afterwards.
func TestDeletingAClusterVersionMidRolloutLeavesNothingInForce(t *testing.T) {
	t.Parallel()
	testenv.SkipIfShort(t)
	e := newMgmtEnv(t, 4*time.Minute, "fleet-delete", "fleet-delete-runs")
	mcs, store := frozenMember(t, e)
	s := deletionSim(t)
	addr := serveInsecure(t, s)
	startController(t, e.mgmt, e.ns, e.runs)

	f := e.fleets()
	f.apply("fleet", addr, s.IDs(), freezeThenPause(s.IDs()))
	run, op := waitFrozenAndUpgrading(t, f, mcs, store)
	if cv := f.get("fleet"); !slices.Contains(cv.Finalizers, v1alpha1.FinalizerRun) {
		t.Errorf("the fleet mid-rollout has finalizers %v; want %s", cv.Finalizers, v1alpha1.FinalizerRun)
	}

	if err := e.dyn.Resource(clusterVersions).Namespace(e.ns).Delete(e.ctx, "fleet", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, time.Minute, "the ClusterVersion gone", func() bool {
		_, err := e.dyn.Resource(clusterVersions).Namespace(e.ns).Get(e.ctx, "fleet", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	checkAborted := func(when string) {
		t.Helper()
		r, err := store.Get(e.ctx, run)
		if err != nil {
			t.Fatalf("%s: member1's run %s: %v; want it kept", when, run, err)
		}
		if r.Status.Phase != v1alpha1.RunAborted || r.Status.Step != "wait" {
			t.Errorf("%s: member1's run %s is %s at step %s (%s); want it Aborted at step wait, where it was", when, run, r.Status.Phase, r.Status.Step, r.Status.Message)
		}
	}
	checkAborted("after the deletion")
	policy := freeze.Name(e.runs, run, "freeze")
	if _, err := mcs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(e.ctx, policy, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1's freeze policy %s: %v; want it lifted", policy, err)
	}
	waitUntil(t, 30*time.Second, "a create in member1's frozen namespace allowed", func() bool {
		return createIn(e.ctx, mcs, "frozen") == nil
	})
	if id, valid, err := lease.Holder(e.ctx, mcs, e.runs, lease.DefaultName); err != nil || valid {
		t.Errorf("member1's run lease after the deletion: held %v by %v (%v); want it free", valid, id, err)
	}
	var events string
	waitUntil(t, 30*time.Second, "an event naming sim-b's operation in flight", func() bool {
		events = fleetEvents(t, e, "fleet")
		return strings.Contains(events, "sim-b UpgradeMaster (operation "+op+")")
	})
	t.Logf("events:\n%s", events)
	for _, want := range []string{"Warning Deleted: ClusterVersion deleted", "member1 (run " + run + ")", "the plugin goes on with"} {
		if !strings.Contains(events, want) {
			t.Errorf("the events do not say %q:\n%s", want, events)
		}
	}
	// A wait on the member operation asks again every 5s: it must not
	// resume the run.
	time.Sleep(6 * time.Second)
	checkAborted("6s later")
}

// frozenMember starts member1 with a namespace frozen for its member
// run to freeze, and its kubeconfig in Secret member1-kubeconfig, which
// the fleet's ServiceAccount may read; it gives its client and run store.
func frozenMember(t *testing.T, e *mgmtEnv) (kubernetes.Interface, *runstore.Store) {
	t.Helper()
	m := members(t, 1, startVersion)[0]
	mcs := clientset(t, m.RESTConfig())
	kc, err := os.ReadFile(m.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	frozen := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "frozen"}}
	if _, err := mcs.CoreV1().Namespaces().Create(e.ctx, frozen, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	readableSecrets(t, e.ctx, e.cs, e.ns, map[string]map[string][]byte{"member1-kubeconfig": {"value": kc}})
	store, err := runstore.New(m.RESTConfig(), e.runs)
	if err != nil {
		t.Fatal(err)
	}
	return mcs, store
}

// deletionSim is the fleet's plugin: member1 runs its version already,
// out of service, so its member run starts at once; sim-b's control
// plane upgrade runs for ten minutes; sim-c keeps serving.
func deletionSim(t *testing.T) *sim.Sim {
	t.Helper()
	pools := func(v string) []pluginsdk.NodePoolVersion {
		return []pluginsdk.NodePoolVersion{{ID: "pool-1", Version: v}}
	}
	return newSim(t, sim.Config{Clusters: []sim.ClusterSpec{
		{ID: "member1", Master: "1.31.0", NodePools: pools("1.31.0"), Service: pluginsdk.ServiceOut},
		{ID: "sim-b", Master: "1.30.0", NodePools: pools("1.30.0")},
		{ID: "sim-c", Master: "1.30.0", NodePools: pools("1.30.0")},
	}, Latency: map[string]time.Duration{sim.OpUpgradeMaster: 10 * time.Minute}})
}

// freezeThenPause rolls the clusters two at a time with a member plan
// that freezes creates in namespace frozen, then pauses ten minutes.
func freezeThenPause(ids []string) func(*v1alpha1.ClusterVersionSpec) {
	two := int32(2)
	return func(s *v1alpha1.ClusterVersionSpec) {
		s.Waves = []v1alpha1.Wave{{Name: "all", Clusters: ids, MaxConcurrency: 2, MaxUnavailable: &two}}
		s.Member = &v1alpha1.FleetMemberSpec{Plan: &v1alpha1.UpgradePlanSpec{Version: "2.0.0", Stages: []v1alpha1.Stage{{
			Name: "hold",
			Steps: []v1alpha1.Step{
				{Name: "freeze", Freeze: &v1alpha1.FreezeStep{Namespaces: []string{"frozen"},
					Rules: []v1alpha1.FreezeRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Operations: []string{"CREATE"}}}}},
				{Name: "wait", Pause: &v1alpha1.PauseStep{Duration: metav1.Duration{Duration: 10 * time.Minute}}},
			},
		}}}}
	}
}

// waitFrozenAndUpgrading waits until member1's member run pauses, its
// freeze in force, and sim-b's control plane upgrade is in flight; it
// returns the run and the operation.
func waitFrozenAndUpgrading(t *testing.T, f *fleets, mcs kubernetes.Interface, store *runstore.Store) (run, op string) {
	t.Helper()
	waitUntil(t, 2*time.Minute, "member1's run frozen and sim-b's control plane upgrading", func() bool {
		run, op = "", ""
		for _, c := range f.get("fleet").Status.Clusters {
			switch o := c.Operation; {
			case o == nil:
			case c.ID == "member1" && o.Action == v1alpha1.ActionUpgradeMember:
				run = o.ID[strings.LastIndex(o.ID, "/")+1:]
			case c.ID == "sim-b" && o.Action == v1alpha1.ActionUpgradeMaster:
				op = o.ID
			}
		}
		if run == "" || op == "" {
			return false
		}
		r, err := store.Get(f.ctx, run)
		return err == nil && r.Status.Step == "wait" && apierrors.IsForbidden(createIn(f.ctx, mcs, "frozen"))
	})
	return run, op
}

// createIn creates a ConfigMap in the namespace.
func createIn(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}, metav1.CreateOptions{})
	return err
}

// fleetEvents lists the events of a ClusterVersion, one a line.
func fleetEvents(t *testing.T, e *mgmtEnv, name string) string {
	t.Helper()
	list, err := e.cs.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		out = append(out, ev.Type+" "+ev.Reason+": "+ev.Message)
	}
	return strings.Join(out, "\n")
}

func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %s", what, timeout)
		}
	}
}
