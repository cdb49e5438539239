package fleet_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// One fleet with spec.member, three rollouts:
//
//  1. to v1.35.0 with a member plan (a step writing a ConfigMap on the
//     member) and health checks: every member ends with the ConfigMap and
//     its run Succeeded in its own run store, and each run had succeeded
//     when its cluster was put back in service;
//  2. to v1.36.0 with a new plan and a health check only the first two
//     members pass: the third's run fails (and rolls its plan back), the
//     rollout halts with the third out of service, and status and events
//     say why;
//  3. to v1.37.0, onFailure Revert, with the health check failing on the
//     second cluster: each cluster's member run is rolled back (its
//     ConfigMap as before this rollout) and its versions go back.
func TestFleetRunsMemberPlanAndHealthChecks(t *testing.T) {
	t.Parallel()
	e := newFleetEnv(t)
	// Three rollouts with member runs take longer than the fleet's
	// default budget.
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	t.Cleanup(cancel)
	e.ctx = ctx
	e.kubeconfigSecrets()
	ctl := startController(t, e.mgmt, e.ns, e.runs)

	// Seen when the plugin is asked to put a cluster back: the member run
	// of the release rolling out, Succeeded, on that member.
	var mu sync.Mutex
	release := "2.0.0"
	doneAtServiceIn := map[string]bool{}
	e.calls.mu.Lock()
	e.calls.beforeServiceIn = func(id string) {
		mu.Lock()
		want := release
		mu.Unlock()
		ok := e.memberRunSucceeded(id, want)
		mu.Lock()
		// The first service in of the release counts: a cluster served
		// before its member run is not excused by a later one.
		if _, seen := doneAtServiceIn[id+" "+want]; !seen {
			doneAtServiceIn[id+" "+want] = ok
		}
		mu.Unlock()
	}
	e.calls.mu.Unlock()

	t.Log("1. a member plan and health checks on each cluster, before its service in; the controller killed mid-run")
	soak := &v1alpha1.Gate{Soak: &v1alpha1.SoakGate{Duration: metav1.Duration{Duration: 3 * time.Second}}}
	e.apply("fleet", "ops-tls", "v1.35.0", v1alpha1.FailureHalt, memberSpec("2.0.0", soak))
	killedIn, run := e.memberRunInFlight("fleet")
	ctl.kill()
	ctl = startController(t, e.mgmt, e.ns, e.runs)
	cv := e.waitPhase("fleet", v1alpha1.FleetSucceeded, 4*time.Minute)
	if !strings.Contains(ctl.out.String(), "resuming run "+run) {
		t.Errorf("the restarted controller did not resume %s's run %s (killed while it ran)", killedIn, run)
	}
	for i, id := range e.ids {
		e.at(id, "v1.35.0")
		if got := e.platformRelease(id); got != "2.0.0" {
			t.Errorf("%s: ConfigMap platform says release %q, want 2.0.0 (the member plan's)", id, got)
		}
		m := cv.Status.Clusters[i].Member
		if m == nil || m.Phase != v1alpha1.RunSucceeded {
			t.Errorf("%s: status member %+v, want its run Succeeded", id, m)
			continue
		}
		if run := e.memberRun(id, m.Run); run == nil || run.Status.Phase != v1alpha1.RunSucceeded {
			t.Errorf("%s: run %s in the member's run store: %+v, want Succeeded", id, m.Run, run)
		}
		mu.Lock()
		if !doneAtServiceIn[id+" 2.0.0"] {
			t.Errorf("%s was put back in service before its member run succeeded", id)
		}
		mu.Unlock()
	}
	ev := e.events("fleet")
	for _, id := range e.ids {
		if !strings.Contains(ev, "Normal MemberUpgraded: cluster "+id+": member run fleet-fleet-") {
			t.Errorf("events do not say %s's member run succeeded:\n%s", id, ev)
		}
	}

	t.Log("2. a health check the third cluster fails halts the rollout there")
	for _, id := range e.ids[:2] {
		e.healthyMarker(id)
	}
	mu.Lock()
	release = "3.0.0"
	mu.Unlock()
	e.apply("fleet", "ops-tls", "v1.36.0", v1alpha1.FailureHalt, memberSpec("3.0.0", healthyMarkerGate()))
	cv = e.waitPhase("fleet", v1alpha1.FleetHalted, 4*time.Minute)
	for _, id := range e.ids[:2] {
		e.at(id, "v1.36.0")
		if got := e.platformRelease(id); got != "3.0.0" {
			t.Errorf("%s: release %q, want 3.0.0", id, got)
		}
	}
	third := cv.Status.Clusters[2]
	if third.Phase != v1alpha1.ClusterFailed || third.InService {
		t.Errorf("member3 %s, in service %t: want Failed and out of service", third.Phase, third.InService)
	}
	if m := third.Member; m == nil || m.Phase != v1alpha1.RunFailed {
		t.Errorf("member3's status member %+v, want its run Failed", m)
	} else if run := e.memberRun("member3", m.Run); run == nil || run.Status.Phase != v1alpha1.RunRolledBack {
		t.Errorf("member3's run %s: %+v, want RolledBack (its plan's autoRollback)", m.Run, run)
	}
	if got := e.platformRelease("member3"); got != "2.0.0" {
		t.Errorf("member3: release %q, want 2.0.0 (its failed run rolled back)", got)
	}
	for _, want := range []string{"halted: cluster member3: UpgradeMember failed", "healthy"} {
		if !strings.Contains(cv.Status.Message, want) {
			t.Errorf("status message %q does not say %q", cv.Status.Message, want)
		}
	}
	ev = e.events("fleet")
	if !strings.Contains(ev, "Warning OperationFailed: cluster member3: operation_type: UpgradeMember") {
		t.Errorf("events do not say member3's member run failed:\n%s", ev)
	}
	if n := e.calls.times("member3 ServiceIn"); n != 1 {
		t.Errorf("member3 put back in service %d times; want once (the first rollout's)", n)
	}

	t.Log("3. a health check the second cluster fails, onFailure Revert: the member runs are rolled back, then the versions")
	// member3, out of service since the halt, goes first (it adds
	// nothing unavailable), then member1; member2 fails.
	e.healthyMarker("member3")
	if err := e.members["member2"].CoreV1().ConfigMaps("default").Delete(e.ctx, "healthy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	release = "4.0.0"
	mu.Unlock()
	// The revert takes the failed member2, out of service, first: last
	// first, member3 would have to go out while member2 is, below the two
	// serving the fleet requires, and the revert would wait for ever.
	e.apply("fleet", "ops-tls", "v1.37.0", v1alpha1.FailureRevert, memberSpec("4.0.0", healthyMarkerGate()))
	cv = e.waitPhase("fleet", v1alpha1.FleetReverted, 5*time.Minute)
	for i, id := range e.ids {
		e.at(id, "v1.36.0")
		// As before this rollout: member2's own run rolled itself back,
		// member3's second one had.
		want := map[string]string{"member1": "3.0.0", "member2": "3.0.0", "member3": "2.0.0"}[id]
		if got := e.platformRelease(id); got != want {
			t.Errorf("%s: release %q after the revert, want %s (as before this rollout)", id, got, want)
		}
		m := cv.Status.Clusters[i].Member
		if m == nil || m.Phase != v1alpha1.RunRolledBack {
			t.Errorf("%s: status member %+v, want its run RolledBack", id, m)
		} else if run := e.memberRun(id, m.Run); run == nil || run.Status.Phase != v1alpha1.RunRolledBack {
			t.Errorf("%s: run %s in the member's run store: %+v, want RolledBack", id, m.Run, run)
		}
		if c := cv.Status.Clusters[i]; c.Phase != v1alpha1.ClusterReverted || !c.InService {
			t.Errorf("%s: %s, in service %t; want Reverted and serving", id, c.Phase, c.InService)
		}
	}
	ev = e.events("fleet")
	for _, want := range []string{"Warning OperationFailed: cluster member2: operation_type: UpgradeMember",
		"Normal MemberRolledBack: cluster member1", "Normal MemberRolledBack: cluster member3", "Normal Reverted: reverted 3 cluster(s)"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events do not say %q:\n%s", want, ev)
		}
	}
}

// memberRunInFlight waits until a member run runs on some cluster, saved
// in its run store, and names the cluster and the run.
func (e *fleetEnv) memberRunInFlight(name string) (string, string) {
	e.t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, c := range e.get(name).Status.Clusters {
			op := c.Operation
			if op == nil || op.Action != v1alpha1.ActionUpgradeMember {
				continue
			}
			run := op.ID[strings.LastIndex(op.ID, "/")+1:]
			if r := e.memberRun(c.ID, run); r != nil && r.Status.Phase == v1alpha1.RunRunning {
				return c.ID, run
			}
		}
	}
	e.t.Fatal("no member run running within two minutes")
	return "", ""
}

// memberSpec is a member plan writing ConfigMap platform with the release,
// and health checks: its web pods Running, and extra.
// healthyMarkerGate is the health check the tests fail on a member by
// deleting its ConfigMap default/healthy (healthyMarker makes it).
func healthyMarkerGate() *v1alpha1.Gate {
	return &v1alpha1.Gate{
		Timeout: &metav1.Duration{Duration: 10 * time.Second},
		Ready:   &v1alpha1.ReadyGate{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "healthy"},
	}
}

func memberSpec(release string, extra *v1alpha1.Gate) func(*v1alpha1.ClusterVersionSpec) {
	return func(s *v1alpha1.ClusterVersionSpec) {
		gates := []v1alpha1.Gate{{PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "default", Selector: "app=web"}}}
		if extra != nil {
			gates = append(gates, *extra)
		}
		s.Member = &v1alpha1.FleetMemberSpec{
			Plan: &v1alpha1.UpgradePlanSpec{Version: release, Stages: []v1alpha1.Stage{{
				Name: "platform",
				Steps: []v1alpha1.Step{{Name: "platform-config", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: `apiVersion: v1
kind: ConfigMap
metadata: {name: platform, namespace: default}
data: {release: "` + release + `"}
`}}}},
			}}},
			HealthChecks: gates,
		}
	}
}

// kubeconfigSecrets stores each member's kubeconfig as Cluster API does
// (<id>-kubeconfig, key value), readable by the fleet's ServiceAccount.
func (e *fleetEnv) kubeconfigSecrets() {
	e.t.Helper()
	var names []string
	for _, id := range e.ids {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: id + "-kubeconfig", Namespace: e.ns}, Data: map[string][]byte{"value": e.kubeconfigs[id]}}
		if _, err := e.cs.CoreV1().Secrets(e.ns).Create(e.ctx, s, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
		names = append(names, s.Name)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "fleet-kubeconfigs", Namespace: e.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: names, Verbs: []string{"get"}}}}
	if _, err := e.cs.RbacV1().Roles(e.ns).Create(e.ctx, role, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleet-kubeconfigs", Namespace: e.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "fleet", Namespace: e.ns}}}
	if _, err := e.cs.RbacV1().RoleBindings(e.ns).Create(e.ctx, rb, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// healthyMarker creates ConfigMap healthy, which the second rollout's
// health check wants, on a member.
func (e *fleetEnv) healthyMarker(id string) {
	e.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "healthy", Namespace: "default"}}
	if _, err := e.members[id].CoreV1().ConfigMaps("default").Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// platformRelease is what the member plan wrote on a member ("" when
// nothing).
func (e *fleetEnv) platformRelease(id string) string {
	cm, err := e.members[id].CoreV1().ConfigMaps("default").Get(e.ctx, "platform", metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return cm.Data["release"]
}

// store is the member's run store, where the controller keeps its runs.
func (e *fleetEnv) store(id string) *runstore.Store {
	e.t.Helper()
	s, err := runstore.New(e.configs[id], e.runs)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// memberRun reads a run from the member's run store (nil when absent).
func (e *fleetEnv) memberRun(id, name string) *v1alpha1.UpgradeRun {
	e.t.Helper()
	r, err := e.store(id).Get(e.ctx, name)
	if err != nil {
		return nil
	}
	return r
}

// memberRunSucceeded tells whether a run of the release succeeded on the
// member.
func (e *fleetEnv) memberRunSucceeded(id, release string) bool {
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	s, err := runstore.New(e.configs[id], e.runs)
	if err != nil {
		return false
	}
	runs, err := s.List(ctx)
	if err != nil {
		return false
	}
	for _, r := range runs {
		if r.Spec.Plan.Version == release && r.Status.Phase == v1alpha1.RunSucceeded {
			return true
		}
	}
	return false
}
