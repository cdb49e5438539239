package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Set makes conds describe run (nil before the run exists) for an object
// at generation: what an UpgradePlan and an UpgradeRun both carry. A
// condition whose status does not change keeps its lastTransitionTime;
// one that changes, or appears, gets now. Reconciling, Stalled,
// RolledBack and WaitingForApproval are present only while True
// (kstatus's abnormal-true polarity); Ready always is.
func Set(conds *[]metav1.Condition, generation int64, run *v1alpha1.UpgradeRun, now metav1.Time) {
	set := func(c metav1.Condition, present bool) {
		if !present {
			meta.RemoveStatusCondition(conds, c.Type)
			return
		}
		c.ObservedGeneration = generation
		c.LastTransitionTime = now
		meta.SetStatusCondition(conds, c)
	}
	set(Ready(run), true)
	set(Reconciling(run))
	set(Stalled(run))
	set(RolledBack(run))
	set(WaitingForApproval(run))
}

// SetRunStatus makes the run's own status.observedGeneration and
// status.conditions describe the rest of its status: the run store calls
// it on every save, so `kubectl wait --for=condition=Ready upgraderun/NAME`
// and kstatus readers see the run as it stands.
func SetRunStatus(run *v1alpha1.UpgradeRun, now metav1.Time) {
	run.Status.ObservedGeneration = run.Generation
	Set(&run.Status.Conditions, run.Generation, run, now)
}
