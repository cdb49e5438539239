package conditions

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

// kstatus, which kubectl-style waits and GitOps tools (Flux, Argo CD's
// kstatus checks, cli-utils appliers) use, reads a plan whose status
// SetPlanStatus wrote as its run stands: Current once it succeeded,
// InProgress while it moves or waits, Failed when a person must act, and
// InProgress while the status is of an older generation.
func TestKstatusReadsThePlan(t *testing.T) {
	for _, tc := range []struct {
		name       string
		run        *v1alpha1.UpgradeRun
		generation int64 // the plan's; the status observed generation 2
		want       status.Status
	}{
		{name: "succeeded", run: drive(newRun(true), nil, nil), generation: 2, want: status.CurrentStatus},
		{name: "running", run: drive(newRun(true), nil, at(engine.RunStep, 0, 0)), generation: 2, want: status.InProgressStatus},
		{name: "waiting for an approval", run: drive(newRun(true), nil, at(engine.RunStep, 1, 0)), generation: 2, want: status.InProgressStatus},
		{name: "rolling back", run: drive(newRun(true), []string{"step 2/0"}, at(engine.Restore, 2, 0)), generation: 2, want: status.InProgressStatus},
		{name: "rolled back", run: drive(newRun(true), []string{"step 2/0"}, nil), generation: 2, want: status.FailedStatus},
		{name: "failed", run: drive(newRun(false), []string{"step 2/0"}, nil), generation: 2, want: status.FailedStatus},
		{name: "no run yet", generation: 2, want: status.InProgressStatus},
		{name: "succeeded, plan edited since", run: drive(newRun(true), nil, nil), generation: 3, want: status.InProgressStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &v1alpha1.UpgradePlan{
				TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.PlanKind},
				ObjectMeta: metav1.ObjectMeta{Name: "demo-1.1.0", Namespace: "upgrades", Generation: tc.generation},
			}
			SetPlanStatus(&p.Status, 2, tc.run, metav1.NewTime(t0))
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
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
		})
	}
}
