package fleet_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// One fleet, four rollouts, in order:
//
//  1. to v1.35.0: every cluster ends there, never fewer than two serving
//     (sampled by a router every 50ms), the drains keep each member's
//     web PodDisruptionBudget;
//  2. to v1.36.0, onFailure Revert, with the third cluster's drain
//     blocked by a PodDisruptionBudget: the third fails, and the three go
//     back to v1.35.0, last first; events and status say why;
//  3. to v1.37.0, onFailure Halt, still blocked: the rollout halts at the
//     third, the first two done;
//  4. to v1.38.0, unblocked, with the controller killed while a control
//     plane upgrade is in flight: the new controller re-attaches to it,
//     and no operation is asked for twice.
func TestFleetRollsHaltsRevertsAndResumes(t *testing.T) {
	t.Parallel()
	e := newFleetEnv(t)
	ctl := startController(t, e.mgmt, e.ns, e.runs)

	t.Log("1. a rollout within the availability budget")
	r := startRouter(e.plugin, e.members, e.ids)
	e.apply("fleet", "ops-tls", "v1.35.0", v1alpha1.FailureHalt)
	cv := e.waitPhase("fleet", v1alpha1.FleetSucceeded, 3*time.Minute)
	if fewest := r.end(); fewest < 2 {
		t.Errorf("%d clusters served at one point; requiredAvailableCount is 2", fewest)
	}
	for _, id := range e.ids {
		e.at(id, "v1.35.0")
	}
	if cv.Status.Done != 3 || cv.Status.Available != 3 {
		t.Errorf("status counts done %d, available %d; want 3, 3", cv.Status.Done, cv.Status.Available)
	}
	for _, id := range e.ids {
		// The drains go through the eviction API: the web budget keeps
		// two of three pods Ready throughout.
		if n := r.fewestWeb(id); n < 2 {
			t.Errorf("%s: %d web pods Ready at one point; its PodDisruptionBudget keeps 2", id, n)
		}
		if n := e.calls.times("%s UpgradeNodePool blue v1.35.0", id); n != 1 {
			t.Errorf("%s: pool blue upgraded %d times, want once", id, n)
		}
	}

	t.Log("2. a failure on the third cluster, onFailure Revert: the first two go back")
	unblock := e.blockDrain("member3")
	e.apply("fleet", "ops-tls", "v1.36.0", v1alpha1.FailureRevert)
	cv = e.waitPhase("fleet", v1alpha1.FleetReverted, 4*time.Minute)
	for _, id := range e.ids {
		e.at(id, "v1.35.0")
	}
	for _, c := range cv.Status.Clusters {
		if c.Phase != v1alpha1.ClusterReverted || !c.InService || c.Previous == nil || c.Previous.Master != "v1.35.0" {
			t.Errorf("%s: %s, in service %t, previous %+v; want Reverted to v1.35.0 and serving", c.ID, c.Phase, c.InService, c.Previous)
		}
	}
	if !strings.Contains(cv.Status.Cause, "cluster member3") || !strings.Contains(cv.Status.Cause, "drain of node node-2 did not finish") {
		t.Errorf("cause %q: want member3's drain named", cv.Status.Cause)
	}
	ev := e.events("fleet")
	for _, want := range []string{"Warning OperationFailed: cluster member3: operation_type: UpgradeNodePool", "disruption budget",
		"Warning Reverting:", "Normal ClusterReverted: cluster member1", "Normal Reverted: reverted 3 cluster(s)"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events do not say %q:\n%s", want, ev)
		}
	}
	if i, j := strings.Index(ev, "ClusterReverted: cluster member2"), strings.Index(ev, "ClusterReverted: cluster member1"); i < 0 || j < i {
		t.Errorf("member2 was not reverted before member1 (last first):\n%s", ev)
	}

	t.Log("3. the same failure with onFailure Halt stops there")
	e.apply("fleet", "ops-tls", "v1.37.0", v1alpha1.FailureHalt)
	cv = e.waitPhase("fleet", v1alpha1.FleetHalted, 3*time.Minute)
	e.at("member1", "v1.37.0")
	e.at("member2", "v1.37.0")
	third := cv.Status.Clusters[2]
	if third.Phase != v1alpha1.ClusterFailed || third.InService || !strings.Contains(cv.Status.Message, "halted: cluster member3") {
		t.Errorf("member3 %s, in service %t; message %q: want Failed, out of service, the halt explained", third.Phase, third.InService, cv.Status.Message)
	}
	if c := cv.Status.Conditions; !hasCondition(c, v1alpha1.ConditionStalled, "True") || !hasCondition(c, v1alpha1.ConditionReady, "False") {
		t.Errorf("conditions %+v: want Stalled and not Ready", c)
	}
	unblock()

	t.Log("4. a controller killed mid-operation; the next re-attaches")
	e.apply("fleet", "ops-tls", "v1.38.0", v1alpha1.FailureHalt)
	var inFlight string
	for deadline := time.Now().Add(time.Minute); inFlight == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, c := range e.get("fleet").Status.Clusters {
			// In flight at the plugin, its answer saved: this plugin
			// cannot look up a call whose answer was lost (FindOperation),
			// and a kill before that save halts the fleet by design.
			if op := c.Operation; op != nil && op.Action == v1alpha1.ActionUpgradeMaster && op.Version == "v1.38.0" && op.ID != "" {
				inFlight = c.ID
			}
		}
	}
	if inFlight == "" {
		t.Fatal("no control plane upgrade in flight within a minute")
	}
	ctl.kill()
	startController(t, e.mgmt, e.ns, e.runs)
	e.waitPhase("fleet", v1alpha1.FleetSucceeded, 3*time.Minute)
	for _, id := range e.ids {
		e.at(id, "v1.38.0")
		if n := e.calls.times("%s UpgradeMaster v1.38.0", id); n != 1 {
			t.Errorf("%s: control plane upgrade to v1.38.0 asked %d times (killed during %s's); want once", id, n, inFlight)
		}
	}
}

func hasCondition(conds []metav1.Condition, typ, status string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return string(c.Status) == status
		}
	}
	return false
}
