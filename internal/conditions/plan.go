package conditions

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// SetPlanStatus makes st describe a plan at generation whose run is run
// (nil before the run exists): the printer columns' fields and the
// conditions (see Set).
func SetPlanStatus(st *v1alpha1.UpgradePlanStatus, generation int64, run *v1alpha1.UpgradeRun, now metav1.Time) {
	st.ObservedGeneration = generation
	st.Run, st.RunUID, st.Version, st.Phase, st.Stage, st.Step = "", "", "", v1alpha1.RunPending, "", ""
	if run != nil {
		st.Run, st.RunUID, st.Version = run.Name, string(run.UID), run.Spec.Plan.Version
		st.Stage, st.Step = run.Status.Stage, run.Status.Step
		if run.Status.Phase != "" {
			st.Phase = run.Status.Phase
		}
	}
	Set(&st.Conditions, generation, run, now)
}
