package fleet

import (
	"context"
	"fmt"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// MemberDriver runs spec.member on member clusters. It is the
// controller's, not the ops plugin's: a Plugin that is a MemberDriver too
// (the controller's router) is given the member actions, which are
// operations like the plugin's, so the status's operation in flight, the
// re-attach after a restart, failures, reverts, events and metrics apply
// to them unchanged. Report and Wait answer for member operations as for
// the plugin's.
type MemberDriver interface {
	// UpgradeMember starts (or resumes) the member run of the cluster.
	UpgradeMember(ctx context.Context, clusterID string) (pluginsdk.Operation, error)
	// RollbackMember rolls back the cluster's member run.
	RollbackMember(ctx context.Context, clusterID, run string) (pluginsdk.Operation, error)
}

// invokeMember makes a member call through the plugin's MemberDriver.
func invokeMember(ctx context.Context, p Plugin, c Call) (pluginsdk.Operation, error) {
	m, ok := p.(MemberDriver)
	if !ok {
		return pluginsdk.Operation{}, fmt.Errorf("%w: no member driver runs spec.member", ErrUnsupported)
	}
	if c.Action == v1alpha1.ActionRollbackMember {
		return m.RollbackMember(ctx, c.Cluster, c.Run)
	}
	return m.UpgradeMember(ctx, c.Cluster)
}

// MemberOperationID is the id of a member operation: the action, the
// cluster and the run, so the operations of one plan on many clusters, and
// a run's upgrade and its rollback, differ (operations are followed by
// id).
func MemberOperationID(action v1alpha1.FleetAction, clusterID, run string) string {
	return string(action) + ":" + clusterID + "/" + run
}

// MemberRunOf is the run a member operation's id names (a run's name has
// no slash; a cluster's id may).
func MemberRunOf(opID string) string { return opID[strings.LastIndex(opID, "/")+1:] }

func isMember(a v1alpha1.FleetAction) bool {
	return a == v1alpha1.ActionUpgradeMember || a == v1alpha1.ActionRollbackMember
}

// memberDue tells whether the cluster still has spec.member to run in
// this rollout. Only clusters the rollout upgrades run it: one already at
// its version and serving is done as it is.
func (x *decider) memberDue(e *v1alpha1.FleetClusterStatus) bool {
	return x.sp.MemberStep && (e.Member == nil || e.Member.Phase != v1alpha1.RunSucceeded)
}

// memberToUndo tells whether a reverting cluster's member run is to be
// rolled back: it ran, and was not rolled back already (by its own
// autoRollback, or by this revert).
func memberToUndo(e *v1alpha1.FleetClusterStatus) bool {
	return e.Member != nil && e.Member.Phase != v1alpha1.RunRolledBack
}

// memberEnded records the end of a member operation on the cluster.
func (x *decider) memberEnded(e *v1alpha1.FleetClusterStatus, op *v1alpha1.PluginOperation, ok bool) {
	run := MemberRunOf(op.ID)
	switch {
	case op.Action == v1alpha1.ActionUpgradeMember && ok:
		e.Member = &v1alpha1.MemberRun{Run: run, Phase: v1alpha1.RunSucceeded, FinishedAt: x.now()}
		x.event(false, ReasonMemberUpgraded, "cluster %s: member run %s succeeded", e.ID, run)
	case op.Action == v1alpha1.ActionUpgradeMember:
		e.Member = &v1alpha1.MemberRun{Run: run, Phase: v1alpha1.RunFailed, FinishedAt: x.now()}
	case op.Action == v1alpha1.ActionRollbackMember && ok:
		e.Member = &v1alpha1.MemberRun{Run: run, Phase: v1alpha1.RunRolledBack, FinishedAt: x.now()}
		x.event(false, ReasonMemberRolledBack, "cluster %s: member run %s rolled back", e.ID, run)
	}
}
