package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
)

// The finalizer (v1alpha1.FinalizerRun) of UpgradePlans and
// PlatformUpgrades (and ClusterVersions: fleet_finalizer.go) exists so that deleting one mid-run leaves nothing in
// force that only its run would undo: a run stopped with its owner would
// keep its freeze (admission denied cluster-wide) and hold up every later
// run. The finalizer is written with a patch of metadata conditional on
// the object's version (the only write the controller makes to these
// objects outside their status).

// holdDeletion adds the finalizer to an object that lacks it, read
// afresh: it is written by a drive just before its run is first written
// or moved, so a plan refused before that gets no write but its status.
func holdDeletion(ctx context.Context, c ctrl.Client, obj ctrl.Object) error {
	return holdDeletionFrom(ctx, c, c, obj)
}

// holdDeletionFrom is holdDeletion reading the object with read.
func holdDeletionFrom(ctx context.Context, read ctrl.Reader, c ctrl.Client, obj ctrl.Object) error {
	key := ctrl.ObjectKeyFromObject(obj)
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur := obj.DeepCopyObject().(ctrl.Object)
		if err := read.Get(ctx, key, cur); err != nil {
			return err
		}
		if controllerutil.ContainsFinalizer(cur, v1alpha1.FinalizerRun) {
			return nil
		}
		patch := ctrl.MergeFromWithOptions(cur.DeepCopyObject().(ctrl.Object), ctrl.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(cur, v1alpha1.FinalizerRun)
		return c.Patch(ctx, cur, patch)
	})
	if err != nil {
		return fmt.Errorf("add finalizer %s to %s: %w", v1alpha1.FinalizerRun, key, err)
	}
	return nil
}

// letGo removes the finalizer: the object may go.
func letGo(ctx context.Context, c ctrl.Client, obj ctrl.Object) error {
	if !controllerutil.ContainsFinalizer(obj, v1alpha1.FinalizerRun) {
		return nil
	}
	patch := ctrl.MergeFromWithOptions(obj.DeepCopyObject().(ctrl.Object), ctrl.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, v1alpha1.FinalizerRun)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("remove finalizer %s from %s/%s: %w", v1alpha1.FinalizerRun, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// stopRuns aborts the runs that are moving (pending, running, rolling
// back, or interrupted), which lifts their freezes, saves them and gives
// the lease back; their records stay. requeue asks to look again when an
// abort was refused or could not be made (said in an event on obj).
func stopRuns(ctx context.Context, sess *runner.Session, rec record.EventRecorder, obj runtime.Object, runs []*v1alpha1.UpgradeRun) (requeue time.Duration) {
	for _, run := range runs {
		if run == nil || !moving(run) {
			continue
		}
		if _, err := sess.Abort(ctx, run.Name); err != nil {
			rec.Event(obj, corev1.EventTypeWarning, ReasonActionRefused, clip(redact.Text("deleting: abort run "+run.Name+": "+err.Error())))
			return 5 * time.Second
		}
		rec.Event(obj, corev1.EventTypeNormal, ReasonActionTaken, clip("deleting: run "+run.Name+" aborted where it was; its record is kept"))
	}
	return 0
}

// release lets a deleted plan go: its drive stopped (the run saved as
// interrupted), then its run, if it still moves, aborted (stopRuns).
func (r *Reconciler) release(ctx context.Context, key types.NamespacedName, plan *v1alpha1.UpgradePlan) (time.Duration, error) {
	r.drives.stop(key)
	run, err := r.runOf(ctx, key)
	if err != nil {
		return 0, err
	}
	if requeue := stopRuns(ctx, r.session, r.recorder, plan, []*v1alpha1.UpgradeRun{run}); requeue > 0 {
		return requeue, nil
	}
	r.drives.unblock(key)
	return 0, letGo(ctx, r.client, plan)
}

// release lets a deleted PlatformUpgrade go: its drive stopped (the hop
// saved as interrupted), then the hops it started that still move
// aborted (stopRuns).
func (r *PlatformReconciler) release(ctx context.Context, key types.NamespacedName, pu *v1alpha1.PlatformUpgrade) (time.Duration, error) {
	r.drives.stop(key)
	all, err := r.session.Store().List(ctx)
	if err != nil {
		return 0, err
	}
	var own []*v1alpha1.UpgradeRun
	for i := range all {
		if o := all[i].Spec.Owner; o != nil && o.UID == pu.UID {
			own = append(own, &all[i])
		}
	}
	if requeue := stopRuns(ctx, r.session, r.recorder, pu, own); requeue > 0 {
		return requeue, nil
	}
	r.drives.blocked.unblock(key)
	return 0, letGo(ctx, r.client, pu)
}
