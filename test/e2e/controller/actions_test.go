package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Approve, abort, retry and rollback, each asked with an annotation as
// `kubectl annotate` would, take effect and are recorded as handled.
func TestActionsByAnnotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.startController("ctl-actions", nil)
	e.createPlan(e.webPlan("web-2", "2.0", "2.0", "upgrader", true))

	p := e.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute)
	if c := findCondition(p, v1alpha1.ConditionWaitingForApproval); !strings.Contains(c.Message, "go-ahead") {
		t.Errorf("WaitingForApproval does not name the step: %q", c.Message)
	}

	// Abort at the approval, then retry: the run resumes and waits again.
	e.annotate("web-2", v1alpha1.AnnotationAbort, "1")
	e.waitCondition("web-2", v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonAborted, time.Minute)
	e.annotate("web-2", v1alpha1.AnnotationRetry, "1")
	e.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute)
	if got := e.webImage(); got != "example.com/web:"+startVersion {
		t.Fatalf("web moved before the approval: %s", got)
	}

	// A wrong step name is refused with an event; the right one approves.
	e.annotate("web-2", v1alpha1.AnnotationApprove, "no-such-step")
	waitFor(t, "a refusal event", func() bool {
		return contains(e.events("web-2"), "Warning ActionRefused: upshift.dev/approve=no-such-step")
	})
	e.annotate("web-2", v1alpha1.AnnotationApprove, "go-ahead")
	p = e.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)
	if got := e.webImage(); got != "example.com/web:2.0" {
		t.Errorf("web's image is %s after the approval, want example.com/web:2.0", got)
	}
	if p.Status.HandledActions[v1alpha1.AnnotationApprove] != "go-ahead" || p.Status.HandledActions[v1alpha1.AnnotationAbort] != "1" || p.Status.HandledActions[v1alpha1.AnnotationRetry] != "1" {
		t.Errorf("handledActions: %v", p.Status.HandledActions)
	}

	// Roll the finished run back: both stages come back to 1.0.
	e.annotate("web-2", v1alpha1.AnnotationRollback, "1")
	e.waitCondition("web-2", v1alpha1.ConditionRolledBack, metav1.ConditionTrue, "", 2*time.Minute)
	if got, cfg := e.webImage(), e.webConfig(); got != "example.com/web:"+startVersion || cfg != startVersion {
		t.Errorf("after the rollback: image %s, config %s; want %s", got, cfg, startVersion)
	}

	// Retry the rolled-back run: a new attempt, approved anew.
	e.annotate("web-2", v1alpha1.AnnotationRetry, "2")
	e.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute)
	e.annotate("web-2", v1alpha1.AnnotationApprove, "go-ahead@2")
	e.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)
	if got := e.webImage(); got != "example.com/web:2.0" {
		t.Errorf("web's image is %s after the second attempt, want example.com/web:2.0", got)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
