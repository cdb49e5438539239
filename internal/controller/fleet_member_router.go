package controller

import (
	"context"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// memberRouter is a fleet's plugin with its member driver: member actions
// (UpgradeMember, RollbackMember) go to the controller's member drives,
// everything else to the ops plugin. The rollout sees one fleet.Plugin,
// so its decider stays free of IO and member operations are followed as
// the plugin's are.
type memberRouter struct {
	fleet.Plugin
	drives *memberDrives
	cv     *v1alpha1.ClusterVersion
}

var (
	_ fleet.Plugin       = memberRouter{}
	_ fleet.MemberDriver = memberRouter{}
)

// withMembers routes a fleet's member actions to drives when it has
// spec.member; without it the plugin is used as it is.
func withMembers(p fleet.Plugin, drives *memberDrives, cv *v1alpha1.ClusterVersion) fleet.Plugin {
	if cv.Spec.Member == nil || drives == nil {
		return p
	}
	return memberRouter{Plugin: p, drives: drives, cv: cv.DeepCopy()}
}

func isMemberOp(op pluginsdk.Operation) bool {
	return op.Type == string(v1alpha1.ActionUpgradeMember) || op.Type == string(v1alpha1.ActionRollbackMember)
}

// UpgradeMember starts the member run on the cluster (or resumes or
// retries it). A kubeconfig that cannot be read or used refuses the call,
// which fails the cluster with the reason.
func (r memberRouter) UpgradeMember(ctx context.Context, clusterID string) (pluginsdk.Operation, error) {
	c, err := r.drives.open(ctx, r.cv, clusterID)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	r.drives.upgrade(ctx, c, true)
	a := v1alpha1.ActionUpgradeMember
	return pluginsdk.Operation{ID: fleet.MemberOperationID(a, clusterID, c.plan.Name), Type: string(a)}, nil
}

// RollbackMember rolls the cluster's member run back.
func (r memberRouter) RollbackMember(ctx context.Context, clusterID, run string) (pluginsdk.Operation, error) {
	c, err := r.drives.open(ctx, r.cv, clusterID)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	r.drives.rollback(c, run)
	a := v1alpha1.ActionRollbackMember
	return pluginsdk.Operation{ID: fleet.MemberOperationID(a, clusterID, run), Type: string(a)}, nil
}

func (r memberRouter) Report(ctx context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	if isMemberOp(op) {
		return r.drives.report(ctx, r.cv, clusterID, op), nil
	}
	return r.Plugin.Report(ctx, clusterID, op)
}

func (r memberRouter) GetOperationStatus(ctx context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
	if isMemberOp(op) {
		return r.drives.report(ctx, r.cv, clusterID, op).Status, nil
	}
	return r.Plugin.GetOperationStatus(ctx, clusterID, op)
}

func (r memberRouter) Wait(ctx context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	if isMemberOp(op) {
		return r.drives.wait(ctx, r.cv, clusterID, op), nil
	}
	return r.Plugin.Wait(ctx, clusterID, op)
}
