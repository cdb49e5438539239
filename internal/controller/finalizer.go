package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// A plan's finalizer (v1alpha1.FinalizerRun) exists so that deleting a
// plan mid-run leaves nothing in force that only its run would undo: a
// run killed with its plan would keep its freeze (admission denied
// cluster-wide) and, until its lease expired, the cluster. The finalizer
// is written with a patch of metadata conditional on the plan's version
// (the only write the controller makes to a plan outside its status).

// holdDeletion adds the finalizer to a plan that lacks it.
func (r *Reconciler) holdDeletion(ctx context.Context, plan *v1alpha1.UpgradePlan) error {
	if controllerutil.ContainsFinalizer(plan, v1alpha1.FinalizerRun) {
		return nil
	}
	patch := ctrl.MergeFromWithOptions(plan.DeepCopy(), ctrl.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(plan, v1alpha1.FinalizerRun)
	if err := r.client.Patch(ctx, plan, patch); err != nil {
		return fmt.Errorf("add finalizer %s to UpgradePlan %s/%s: %w", v1alpha1.FinalizerRun, plan.Namespace, plan.Name, err)
	}
	return nil
}

// release lets a deleted plan go: its run, if it was moving (pending,
// running, rolling back, or interrupted), is aborted first, which lifts
// its freezes, saves it and gives the lease back; then the finalizer is
// removed. The run record stays (`upshift status`, `rollback`). requeue
// asks to look again: the abort was refused or could not be made.
func (r *Reconciler) release(ctx context.Context, key types.NamespacedName, plan *v1alpha1.UpgradePlan) (requeue time.Duration, err error) {
	run, err := r.runOf(ctx, key)
	if err != nil {
		return 0, err
	}
	if run != nil && moving(run) {
		if why := r.abort(ctx, run.Name); why != "" {
			r.recorder.Event(plan, corev1.EventTypeWarning, ReasonActionRefused, clip(redact.Text("deleting: abort run "+run.Name+": "+why)))
			return 5 * time.Second, nil
		}
		r.recorder.Event(plan, corev1.EventTypeNormal, ReasonActionTaken, clip("deleting: run "+run.Name+" aborted where it was; its record is kept"))
	}
	r.drives.stop(key)
	r.drives.unblock(key)
	if !controllerutil.ContainsFinalizer(plan, v1alpha1.FinalizerRun) {
		return 0, nil
	}
	patch := ctrl.MergeFromWithOptions(plan.DeepCopy(), ctrl.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(plan, v1alpha1.FinalizerRun)
	if err := r.client.Patch(ctx, plan, patch); err != nil {
		return 0, fmt.Errorf("remove finalizer %s from UpgradePlan %s: %w", v1alpha1.FinalizerRun, key, err)
	}
	return 0, nil
}
