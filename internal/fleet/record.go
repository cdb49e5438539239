package fleet

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Started records the operation a call started, so the next decision (in
// this process or a restarted one) follows it instead of starting
// another.
func Started(st *v1alpha1.ClusterVersionStatus, c Call, op pluginsdk.Operation, now time.Time) {
	e := find(st, c.Cluster)
	if e == nil {
		return
	}
	version := c.Version
	if c.To != nil {
		version = c.To.Master
	}
	started := metav1.NewTime(now)
	if e.Operation != nil && e.Operation.RequestID == c.RequestID {
		started = e.Operation.StartedAt // its intent's
	}
	e.Operation = &v1alpha1.PluginOperation{ID: op.ID, Type: op.Type, RequestID: c.RequestID, Action: c.Action, NodePool: c.NodePool, Version: version, StartedAt: started}
	e.Message = describe(c)
}

// Refused records a call the plugin refused (not one it could not be
// reached for): the cluster fails as if its operation had, and the next
// decision halts or reverts. It returns the event to emit.
func Refused(st *v1alpha1.ClusterVersionStatus, c Call, err error) Event {
	e := find(st, c.Cluster)
	msg := fmt.Sprintf("%s refused by the plugin: %v", c.Action, err)
	if isMember(c.Action) {
		msg = fmt.Sprintf("%s could not start on the member cluster: %v", c.Action, err)
	}
	if e != nil {
		if e.Phase == v1alpha1.ClusterReverting && st.Phase == v1alpha1.FleetReverting {
			st.Phase = v1alpha1.FleetRevertFailed
			st.Message = fmt.Sprintf("the revert of cluster %s failed (%s): fix it and annotate upshift.dev/retry to go on reverting", e.ID, msg)
		}
		e.Operation, e.Phase, e.Message = nil, v1alpha1.ClusterFailed, msg
	}
	return Event{Warning: true, Reason: ReasonOperationFailed, Message: fmt.Sprintf("cluster %s: %s", c.Cluster, msg)}
}

// describe says what an operation does, for the cluster's message.
func describe(c Call) string {
	switch c.Action {
	case v1alpha1.ActionUpgradeMaster:
		return "upgrading the control plane to " + c.Version
	case v1alpha1.ActionUpgradeNodePool:
		return fmt.Sprintf("upgrading node pool %s to %s", c.NodePool, c.Version)
	case v1alpha1.ActionServiceOut:
		return "taking it out of service"
	case v1alpha1.ActionServiceIn:
		return "putting it back in service"
	case v1alpha1.ActionRevert:
		return "reverting it to " + c.To.Master
	case v1alpha1.ActionUpgradeMember:
		return "running spec.member on it"
	case v1alpha1.ActionRollbackMember:
		return "rolling back its member run " + c.Run
	}
	return string(c.Action)
}

func find(st *v1alpha1.ClusterVersionStatus, id string) *v1alpha1.FleetClusterStatus {
	for i := range st.Clusters {
		if st.Clusters[i].ID == id {
			return &st.Clusters[i]
		}
	}
	return nil
}
