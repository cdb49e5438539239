package controller_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/lease"
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
	if !first.KilledItself(time.Minute) {
		t.Fatalf("the first controller did not die at its failpoint:\n%s", first.Out.String())
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
	resumerWrites := changes(e.writesBy("ctl-resumer", e.ns))
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

// A controller stopped as Kubernetes stops a pod (SIGTERM) saves the run
// where it was, lets go of the run's lease, and exits; the next
// controller goes on without waiting for the lease to expire.
func TestStoppedControllerHandsOver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	first := e.startController("ctl-stopped", nil)
	e.createPlan(e.webPlan("web-2", "2.0", "2.0", "upgrader", true))
	e.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute)

	if err := first.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("the controller did not exit within 20s of SIGTERM:\n%s", first.Out.String())
	}
	if first.Err() != nil {
		t.Errorf("the controller exited with %v after SIGTERM, want 0", first.Err())
	}
	if _, valid, err := lease.Holder(e.ctx, e.cs, e.runs, "upshift"); err != nil || valid {
		t.Errorf("the run's lease is still held after SIGTERM (err %v)", err)
	}

	stopped := time.Now()
	e.startController("ctl-successor", nil)
	e.annotate("web-2", v1alpha1.AnnotationApprove, "go-ahead")
	e.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, time.Minute)
	// The run lease lasts 3s in these tests; the leader Lease 15s. Neither
	// had to expire.
	if took := time.Since(stopped); took > 12*time.Second {
		t.Errorf("the successor took %s to finish the run: did it wait for a lease to expire?", took)
	}
}
