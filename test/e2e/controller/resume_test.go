package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/runner"
)

// A controller killed in the middle of a run (SIGKILL right after it saved
// a transition) leaves the run where it was; another controller process
// resumes it to the same end.
func TestKilledControllerResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	// Transition 6: the config stage is done (start 1, its backup 2-3,
	// its step 4-5) and the app stage's backup has begun.
	first := e.startController("ctl-killed", []string{runner.KillAfterTransitionEnv + "=6"})
	e.createPlan(e.webPlan("web-2", "2.0", "2.0", "upgrader", false))
	if !first.killedItself(time.Minute) {
		t.Fatalf("the first controller did not die at its failpoint:\n%s", first.out.String())
	}
	p := e.getPlan("web-2")
	if p.Status.Phase != v1alpha1.RunRunning {
		t.Fatalf("after the kill the plan shows %s, want Running (a run left mid-way)", p.Status.Phase)
	}

	e.startController("ctl-resumer", nil)
	e.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)
	if got := e.webImage(); got != "example.com/web:2.0" {
		t.Errorf("web's image is %s, want example.com/web:2.0", got)
	}
	// The second process resumed the run: it did not start it over.
	var resumerWrites []string
	for _, w := range e.writesBy("ctl-resumer", e.ns) {
		if !strings.Contains(w, "events/") {
			resumerWrites = append(resumerWrites, w)
		}
	}
	if contains(resumerWrites, "configmaps "+e.ns+"/web-config") {
		t.Errorf("the resuming controller wrote the config again (stage config was done before the kill): %v", resumerWrites)
	}
	if !contains(resumerWrites, "deployments "+e.ns+"/web") {
		t.Errorf("the resuming controller did not move web on: %v", resumerWrites)
	}
	if !contains(e.events("web-2"), "Normal Succeeded") {
		t.Errorf("no Succeeded event: %v", e.events("web-2"))
	}
}

// Two controllers with leader election: one acts, the other only waits
// for the leader's Lease.
func TestLeaderElectionLetsOneAct(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.startController("ctl-a", nil, "--enable-leader-election")
	e.startController("ctl-b", nil, "--enable-leader-election")
	e.createPlan(e.webPlan("web-2", "2.0", "2.0", "upgrader", false))
	e.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)

	acted := 0
	for _, user := range []string{"ctl-a", "ctl-b"} {
		var other []string
		for _, w := range append(e.writesBy(user, e.ns), e.writesBy(user, e.runs)...) {
			if !strings.HasPrefix(w, "create leases ") && !strings.HasPrefix(w, "update leases ") || !strings.HasSuffix(w, "/upshift-controller") {
				other = append(other, w)
			}
		}
		if len(other) > 0 {
			acted++
			if !contains(other, "upgradeplans/status "+e.ns+"/web-2") {
				t.Errorf("%s acted but did not write the plan's status: %v", user, other)
			}
		}
	}
	if acted != 1 {
		t.Errorf("%d controllers wrote something besides the leader Lease, want exactly 1", acted)
	}
}
