package fleet

import (
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// revert takes the clusters this rollout changed back to their recorded
// versions, one at a time: those out of service first, then last first
// (revertOrder). Clusters start in wave order, then spec order, so last
// first is the reverse of that.
func (x *decider) revert() {
	for _, i := range x.revertOrder() {
		e := x.entry(i)
		if e.Phase == v1alpha1.ClusterReverted || e.Previous == nil {
			continue
		}
		if e.Operation != nil {
			return // an upgrade still in flight, or this revert's step
		}
		if e.Phase != v1alpha1.ClusterReverting {
			e.Phase, e.Message = v1alpha1.ClusterReverting, ""
		}
		x.revertStep(e)
		if e.Phase != v1alpha1.ClusterReverted {
			return
		}
		// Reverted now: the next one starts in this step.
	}
	for i := range x.st.Clusters {
		if x.entry(i).Operation != nil {
			return // a cluster never changed, its operation still running
		}
	}
	n := 0
	for i := range x.st.Clusters {
		if x.entry(i).Phase == v1alpha1.ClusterReverted {
			n++
		}
	}
	x.st.Phase = v1alpha1.FleetReverted
	x.st.Message = fmt.Sprintf("reverted %d cluster(s) to the versions they ran before this rollout, after %s", n, x.st.Cause)
	x.event(false, ReasonReverted, "%s", x.st.Message)
}

// revertOrder lists the clusters in the order they are reverted: first
// those not serving (the one that failed, most often), whose revert costs
// the availability budget nothing and gives it back a cluster; then the
// others, last started first. Taking a serving cluster out first could go
// below requiredAvailableCount while the failed one is out, and wait for
// ever. A serving cluster whose revert has begun comes before the other
// serving ones: it is back in service and only its end is to record, or
// it waits to go out.
func (x *decider) revertOrder() []int {
	var out, begun, serving []int
	for w := len(x.sp.Waves) - 1; w >= 0; w-- {
		m := x.sp.members(w)
		for k := len(m) - 1; k >= 0; k-- {
			switch e := x.entry(m[k]); {
			case !e.InService || !e.Available:
				out = append(out, m[k])
			case e.Phase == v1alpha1.ClusterReverting:
				begun = append(begun, m[k])
			default:
				serving = append(serving, m[k])
			}
		}
	}
	return append(append(out, begun...), serving...)
}

// revertStep moves a reverting cluster one step.
func (x *decider) revertStep(e *v1alpha1.FleetClusterStatus) {
	if !x.fresh(e.ID) {
		x.need(e.ID)
		return
	}
	prev := e.Previous
	at := e.Master == prev.Master
	pool := ""
	for _, p := range e.NodePools {
		for _, q := range prev.NodePools {
			if p.ID == q.ID && p.Version != q.Version {
				at = false
				if pool == "" {
					pool = p.ID
				}
			}
		}
	}
	undo := memberToUndo(e)
	switch {
	case (undo || !at) && e.InService:
		x.serviceOut(x.index(e.ID))
	case undo:
		// The member run first, the reverse of the upgrade's order: the
		// platform it installed goes before the versions it ran on.
		x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionRollbackMember, Run: e.Member.Run})
	case !at && x.o.CanRevert:
		x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionRevert, To: clusterVersion(prev)})
	case !at && pool != "":
		// Node pools first: no kubelet newer than its API server.
		x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionUpgradeNodePool, NodePool: pool, Version: versionOf(prev, pool)})
	case !at:
		x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionUpgradeMaster, Version: prev.Master})
	case !e.Available:
		e.Message = "runs its previous versions; waiting for the plugin to say it is available"
		x.requeue(WaitPoll)
	case !e.InService:
		x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionServiceIn})
	default:
		e.Phase, e.FinishedAt, e.Message = v1alpha1.ClusterReverted, x.now(), ""
		x.event(false, ReasonClusterReverted, "cluster %s runs %s again and serves", e.ID, prev.Master)
	}
}

func versionOf(r *v1alpha1.RecordedVersions, pool string) string {
	for _, p := range r.NodePools {
		if p.ID == pool {
			return p.Version
		}
	}
	return ""
}

func (x *decider) index(id string) int {
	for i := range x.st.Clusters {
		if x.st.Clusters[i].ID == id {
			return i
		}
	}
	return -1
}
