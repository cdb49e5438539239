package controller

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
)

// PlatformReconciler reconciles PlatformUpgrades: each one's hops are
// driven in a goroutine through internal/upgrade, as `upshift upgrade
// --to` drives them, with the rights of its ServiceAccount.
type PlatformReconciler struct {
	client   client.Client
	config   *rest.Config
	recorder record.EventRecorder
	log      logr.Logger
	runner   runner.Options
	session  *runner.Session

	drives *platformDrives
	drivers
	answered answered
	// self is what no upgrade may borrow (self.go).
	self self
}

// NewPlatformReconciler builds a PlatformReconciler over the manager's
// client.
func NewPlatformReconciler(c client.Client, cfg *rest.Config, rec record.EventRecorder, log logr.Logger, opts runner.Options) (*PlatformReconciler, error) {
	opts.NoWait = false // a hop waits at approvals; the approve annotation approves
	sess, err := runner.Open(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &PlatformReconciler{client: c, config: cfg, recorder: rec, log: log, runner: opts, session: sess,
		drives: newPlatformDrives(), drivers: newDrivers()}, nil
}

// Reconcile observes a PlatformUpgrade, decides (DecidePlatform), acts,
// and writes its status (ProjectPlatform).
func (r *PlatformReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := req.NamespacedName
	pu := &v1alpha1.PlatformUpgrade{}
	if err := r.client.Get(ctx, key, pu); err != nil {
		if apierrors.IsNotFound(err) {
			r.drives.stop(key)
			r.drives.blocked.unblock(key)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !pu.DeletionTimestamp.IsZero() {
		requeue, err := r.release(ctx, key, pu)
		return ctrl.Result{RequeueAfter: requeue}, err
	}
	d := r.drives.get(key)
	var progress *PlatformProgress
	driving := false
	phase, observed := pu.Status.Phase, pu.Status.ObservedGeneration
	if d != nil {
		p, ended := d.snapshot()
		progress, driving = &p, !ended
		if ended {
			if phase == p.Phase && observed == p.Generation {
				// The cache holds how the drive ended: it is the record now.
				r.drives.forget(key, d)
				d, progress = nil, nil
			} else {
				// The status written at the drive's end may not be in the
				// cache yet: the drive's word is the newer.
				phase, observed = p.Phase, p.Generation
			}
		}
	}
	blocked := r.drives.blocked.blockedOf(key)
	if blocked == nil {
		blocked = PlatformBlockedFromStatus(&pu.Status)
	}
	handled := r.answered.with(pu.UID, pu.Status.HandledActions)
	retryValue, retryRequested := pu.Annotations[v1alpha1.AnnotationRetry]
	retryRequested = retryRequested && handled[v1alpha1.AnnotationRetry] != retryValue
	dec := DecidePlatform(PlatformObserved{
		Generation: pu.Generation, ObservedGeneration: observed,
		Suspend: pu.Spec.Suspend, Phase: phase, Driving: driving, Blocked: blocked, RetryRequested: retryRequested, Now: time.Now(),
	})
	ctrl.LoggerFrom(ctx).V(1).Info("decided", "act", dec.Act, "why", dec.Why)
	switch dec.Act {
	case PlatformStop:
		r.drives.stop(key)
	case PlatformStart:
		r.startDrive(pu, dec.Retry)
		if d = r.drives.get(key); d != nil {
			p, _ := d.snapshot()
			progress = &p
		}
	}

	status := pu.Status.DeepCopy()
	status.HandledActions = maps.Clone(handled)
	r.approve(pu, status, d, driving)
	if retryRequested {
		r.answerRetry(pu, status, retryValue, dec.Retry)
	}
	ProjectPlatform(status, pu.Generation, progress, pu.Spec.Suspend, r.drives.blocked.blockedOf(key), metav1.Now())
	if !equality.Semantic.DeepEqual(status, &pu.Status) {
		// Locked to the version read, as an UpgradePlan's (Reconciler).
		patch := client.MergeFromWithOptions(pu.DeepCopy(), client.MergeFromWithOptimisticLock{})
		pu.Status = *status
		if err := r.client.Status().Patch(ctx, pu, patch); apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		} else if err != nil {
			return ctrl.Result{}, fmt.Errorf("write the status of PlatformUpgrade %s: %w", key, err)
		}
		r.answered.saved(pu.UID, status.HandledActions)
	}
	return ctrl.Result{RequeueAfter: dec.RequeueAfter}, nil
}

// approve answers a new upshift.dev/approve value, as on an UpgradePlan
// (the step's name, then "@" and any token to approve a step of the same
// name in a later hop): the running hop's approval step is approved.
func (r *PlatformReconciler) approve(pu *v1alpha1.PlatformUpgrade, st *v1alpha1.PlatformUpgradeStatus, d *platformDrive, driving bool) {
	value, ok := pu.Annotations[v1alpha1.AnnotationApprove]
	if !ok || st.HandledActions[v1alpha1.AnnotationApprove] == value {
		return
	}
	if st.HandledActions == nil {
		st.HandledActions = map[string]string{}
	}
	st.HandledActions[v1alpha1.AnnotationApprove] = value
	refusal := "no hop is running"
	if driving && d.runName() != "" {
		refusal = ""
		stepName, _, _ := strings.Cut(value, "@")
		who := approverOf(v1alpha1.PlatformUpgradeKind, pu.Namespace, pu.Name)
		if _, err := r.session.ApproveAs(r.base, d.runName(), stepName, who); err != nil {
			refusal = err.Error()
		}
	}
	if refusal != "" {
		r.recorder.Event(pu, corev1.EventTypeWarning, ReasonActionRefused, clip(redact.Text(fmt.Sprintf("%s=%s: %s", v1alpha1.AnnotationApprove, value, refusal))))
		return
	}
	r.recorder.Event(pu, corev1.EventTypeNormal, ReasonActionTaken, clip(redact.Text(fmt.Sprintf("%s=%s: approved run %s", v1alpha1.AnnotationApprove, value, d.runName()))))
}

// answerRetry records a new upshift.dev/retry value as handled, with an
// event saying whether it started the failed hop again.
func (r *PlatformReconciler) answerRetry(pu *v1alpha1.PlatformUpgrade, st *v1alpha1.PlatformUpgradeStatus, value string, started bool) {
	if st.HandledActions == nil {
		st.HandledActions = map[string]string{}
	}
	st.HandledActions[v1alpha1.AnnotationRetry] = value
	if !started {
		r.recorder.Event(pu, corev1.EventTypeWarning, ReasonActionRefused, clip(fmt.Sprintf("%s=%s: the upgrade did not stop at a failed hop (phase %s): nothing to retry", v1alpha1.AnnotationRetry, value, pu.Status.Phase)))
		return
	}
	r.recorder.Event(pu, corev1.EventTypeNormal, ReasonActionTaken, clip(fmt.Sprintf("%s=%s: the failed hop starts again", v1alpha1.AnnotationRetry, value)))
}
