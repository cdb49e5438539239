package fleet

import (
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Annotations the fleet acts on, as on the other resources.
const (
	annotationApprove = v1alpha1.AnnotationApprove
	annotationRetry   = v1alpha1.AnnotationRetry
)

// failures stops a rolling fleet at its first failed cluster: Halted, or
// Reverting when the spec says so.
func (x *decider) failures() {
	switch x.st.Phase {
	case v1alpha1.FleetProgressing, v1alpha1.FleetSoaking, v1alpha1.FleetWaitingForApproval, v1alpha1.FleetSuspended:
	default:
		return
	}
	var failed *v1alpha1.FleetClusterStatus
	for i := range x.st.Clusters {
		if e := x.entry(i); e.Phase == v1alpha1.ClusterFailed {
			failed = e
			break
		}
	}
	if failed == nil {
		return
	}
	x.st.Cause = fmt.Sprintf("cluster %s: %s", failed.ID, failed.Message)
	if !x.sp.Revert {
		x.st.Phase = v1alpha1.FleetHalted
		x.st.Message = fmt.Sprintf("halted: %s; fix it and annotate upshift.dev/retry to go on", x.st.Cause)
		x.event(true, ReasonHalted, "%s", x.st.Message)
		return
	}
	x.st.Phase = v1alpha1.FleetReverting
	x.st.Message = "reverting the clusters this rollout changed after " + x.st.Cause
	x.event(true, ReasonReverting, "%s", x.st.Message)
	for i := range x.st.Clusters {
		// Started but not changed yet: nothing to take back.
		if e := x.entry(i); e.Phase == v1alpha1.ClusterUpgrading && e.Previous == nil && e.Operation == nil {
			e.Phase, e.Message = v1alpha1.ClusterPending, ""
		}
	}
}

// retry answers upshift.dev/retry on a stopped fleet.
func (x *decider) retry() {
	if !x.o.Retry {
		return
	}
	switch x.st.Phase {
	case v1alpha1.FleetHalted:
		for i := range x.st.Clusters {
			if e := x.entry(i); e.Phase == v1alpha1.ClusterFailed {
				e.Phase, e.Message = v1alpha1.ClusterUpgrading, ""
				x.needFresh(e.ID)
			}
		}
		x.st.Phase, x.st.Message, x.st.Cause = v1alpha1.FleetProgressing, "", ""
		x.event(false, ReasonRetried, "retried: the rollout goes on from the failed clusters")
	case v1alpha1.FleetRevertFailed:
		for i := range x.st.Clusters {
			if e := x.entry(i); e.Phase == v1alpha1.ClusterFailed && e.Previous != nil {
				e.Phase, e.Message = v1alpha1.ClusterReverting, ""
				x.needFresh(e.ID)
			}
		}
		x.st.Phase = v1alpha1.FleetReverting
		x.st.Message = "reverting the clusters this rollout changed after " + x.st.Cause
		x.event(false, ReasonRetried, "retried: the revert goes on")
	case v1alpha1.FleetReverted:
		x.restart()
		x.event(false, ReasonRetried, "retried: a new rollout starts")
	default:
		return
	}
	x.handled(annotationRetry)
}

// handled records an action annotation's value as acted on.
func (x *decider) handled(key string) {
	v := x.o.Approve
	if key == annotationRetry {
		v = x.o.RetryValue
	}
	if x.st.HandledActions == nil {
		x.st.HandledActions = map[string]string{}
	}
	x.st.HandledActions[key] = v
}

// suspend starts nothing; a rolling fleet shows Suspended until resumed.
func (x *decider) suspend() {
	switch x.st.Phase {
	case v1alpha1.FleetProgressing, v1alpha1.FleetSoaking, v1alpha1.FleetWaitingForApproval:
		x.st.Phase = v1alpha1.FleetSuspended
		x.st.Message = "suspended: operations in flight are followed; none starts"
	}
}
