package engine

import "github.com/upshift-dev/upshift/api/v1alpha1"

// FromVersion is the version a new run starts from, as the cluster's run
// history tells (a cluster has one history of upgrades): the version of
// the run that succeeded last among others, "" when none did. A run rolled
// back after it succeeded is no longer Succeeded, so the version before
// it counts again.
func FromVersion(others []v1alpha1.UpgradeRun) string {
	var last *v1alpha1.UpgradeRun
	for i := range others {
		r := &others[i]
		if r.Status.Phase != v1alpha1.RunSucceeded || r.Status.FinishedAt == nil {
			continue
		}
		if last == nil || r.Status.FinishedAt.After(last.Status.FinishedAt.Time) {
			last = r
		}
	}
	if last == nil {
		return ""
	}
	return last.Spec.Plan.Version
}
