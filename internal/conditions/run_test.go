package conditions

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

// A run's own status carries the same conditions as its plan's, at the
// run's generation, and kstatus reads an UpgradeRun as it reads the plan:
// Current once it succeeded, InProgress while it moves or waits, Failed
// when a person must act.
func TestSetRunStatus(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   *v1alpha1.UpgradeRun
		ready metav1.ConditionStatus
		want  status.Status
	}{
		{name: "succeeded", run: drive(newRun(true), nil, nil), ready: metav1.ConditionTrue, want: status.CurrentStatus},
		{name: "running", run: drive(newRun(true), nil, at(engine.RunStep, 0, 0)), ready: metav1.ConditionFalse, want: status.InProgressStatus},
		{name: "waiting for an approval", run: drive(newRun(true), nil, at(engine.RunStep, 1, 0)), ready: metav1.ConditionFalse, want: status.InProgressStatus},
		{name: "rolled back", run: drive(newRun(true), []string{"step 2/0"}, nil), ready: metav1.ConditionFalse, want: status.FailedStatus},
		{name: "failed", run: drive(newRun(false), []string{"step 2/0"}, nil), ready: metav1.ConditionFalse, want: status.FailedStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.run
			r.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.RunKind}
			r.Namespace, r.Generation = "upshift-system", 1
			SetRunStatus(r, metav1.NewTime(t0))
			if r.Status.ObservedGeneration != 1 {
				t.Errorf("observedGeneration %d, want 1", r.Status.ObservedGeneration)
			}
			var plan v1alpha1.UpgradePlanStatus
			SetPlanStatus(&plan, 1, r, metav1.NewTime(t0))
			if len(plan.Conditions) != len(r.Status.Conditions) {
				t.Errorf("the run has %d conditions, its plan %d", len(r.Status.Conditions), len(plan.Conditions))
			}
			for _, c := range plan.Conditions {
				if got := meta.FindStatusCondition(r.Status.Conditions, c.Type); got == nil || *got != c {
					t.Errorf("run condition %s = %+v, the plan's %+v", c.Type, got, c)
				}
			}
			if c := meta.FindStatusCondition(r.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != tc.ready {
				t.Errorf("Ready = %+v, want %s", c, tc.ready)
			}
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r)
			if err != nil {
				t.Fatal(err)
			}
			res, err := status.Compute(&unstructured.Unstructured{Object: obj})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.want {
				t.Errorf("kstatus %s (%s), want %s", res.Status, res.Message, tc.want)
			}
			// A later generation than the status observed is in progress.
			r.Generation = 2
			obj, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(r)
			if res, _ := status.Compute(&unstructured.Unstructured{Object: obj}); res.Status != status.InProgressStatus {
				t.Errorf("kstatus of a stale status %s, want InProgress", res.Status)
			}
		})
	}
}
