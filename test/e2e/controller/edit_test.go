package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A plan edited while its run moves is not silently taken as done: the
// status keeps describing the generation the run started from until it
// ends, and then the edit is refused (a new plan needs a new name), as
// `upshift apply` refuses a changed plan file.
func TestPlanEditedMidRunIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.startController("ctl-edit", nil)
	e.createPlan(e.webPlan("web-2", "2.0", "2.0", "upgrader", true))
	e.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute)

	patch := `[{"op":"replace","path":"/spec/stages/2/steps/0/image/images/web","value":"example.com/web:3.0"}]`
	if _, err := e.dyn.Resource(plansGVR).Namespace(e.ns).Patch(e.ctx, "web-2", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // time for a reconcile that would wrongly claim generation 2
	if p := e.getPlan("web-2"); p.Generation != 2 || p.Status.ObservedGeneration != 1 {
		t.Errorf("mid-run after the edit: generation %d, observedGeneration %d; want 2 and 1 (the run is of generation 1)", p.Generation, p.Status.ObservedGeneration)
	}

	e.annotate("web-2", v1alpha1.AnnotationApprove, "go-ahead")
	p := e.waitCondition("web-2", v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonRefused, time.Minute)
	if c := findCondition(p, v1alpha1.ConditionStalled); !strings.Contains(c.Message, "other content") || !strings.Contains(c.Message, "new metadata.name") {
		t.Errorf("Stalled does not say why: %s", c.Message)
	}
	if r := findCondition(p, v1alpha1.ConditionReady); r == nil || r.Status != metav1.ConditionFalse {
		t.Errorf("Ready: %+v, want False: generation 2 never ran", r)
	}
	if got := e.webImage(); got != "example.com/web:2.0" {
		t.Errorf("web's image is %s, want the run's example.com/web:2.0", got)
	}
}
