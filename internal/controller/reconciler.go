package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/metrics"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// Reconciler reconciles UpgradePlans. It is also a manager Runnable, so
// a stopping manager interrupts its drives and waits until each has saved
// where it stopped.
type Reconciler struct {
	client   client.Client
	config   *rest.Config // the controller's own identity
	recorder record.EventRecorder
	log      logr.Logger
	// runner holds the session options every drive starts from: the runs
	// namespace and the lease's timing.
	runner runner.Options
	// session is the controller's own: it reads records and writes the
	// approvals and abort requests that need no lease of their own.
	session *runner.Session

	drives *drives
	drivers
	answered answered
	// self is what no plan may borrow (self.go).
	self self
}

// NewReconciler builds a Reconciler over the manager's client.
func NewReconciler(c client.Client, cfg *rest.Config, rec record.EventRecorder, log logr.Logger, opts runner.Options) (*Reconciler, error) {
	opts.NoWait = false // a drive waits at approvals and pauses; annotations approve
	sess, err := runner.Open(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &Reconciler{client: c, config: cfg, recorder: rec, log: log, runner: opts, session: sess,
		drives: newDrives(), drivers: newDrivers()}, nil
}

// Reconcile observes a plan, decides (Decide), acts and writes its status
// (Project).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	key := req.NamespacedName
	plan := &v1alpha1.UpgradePlan{}
	if err := r.client.Get(ctx, key, plan); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone without the finalizer (removed by hand): its run
			// stays saved where it stopped.
			r.drives.stop(key)
			r.drives.unblock(key)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !plan.DeletionTimestamp.IsZero() {
		requeue, err := r.release(ctx, key, plan)
		return ctrl.Result{RequeueAfter: requeue}, err
	}
	run, err := r.runOf(ctx, key)
	if err != nil {
		return ctrl.Result{}, err
	}
	pruned := run == nil && wasApplied(plan)
	dec := Decide(Observed{
		Generation:         plan.Generation,
		ObservedGeneration: plan.Status.ObservedGeneration,
		Suspend:            plan.Spec.Suspend,
		Run:                run,
		Pruned:             pruned,
		Driving:            r.drives.get(key) != nil,
		Blocked:            r.blockedOf(key, plan),
		Requests:           PendingRequests(plan.Annotations, r.answered.with(plan.UID, plan.Status.HandledActions)),
		Now:                time.Now(),
	})
	log.V(1).Info("decided", "act", dec.Act, "why", dec.Why)

	refusal := dec.Refusal
	switch dec.Act {
	case Stop:
		r.drives.stop(key)
	case Approve:
		refusal = r.approve(ctx, run.Name, dec.Step, approverOf(v1alpha1.PlanKind, plan.Namespace, plan.Name))
	case Abort:
		refusal = r.abort(ctx, run.Name)
	case Apply, ApplyRetry, RetryStep, Rollback:
		r.startDrive(plan, dec.Act, run)
	}
	if dec.Act == Stop || dec.Act == Approve || dec.Act == Abort {
		if run, err = r.runOf(ctx, key); err != nil {
			return ctrl.Result{}, err
		}
	}

	status := r.answer(plan, dec.Handles, refusal)
	if !pruned || dec.Act != Wait {
		Project(status, r.observedGeneration(key, plan), run, plan.Spec.Suspend, r.blockedOf(key, plan), metav1.Now())
	}
	if run != nil {
		metrics.SetRun(run.Name, phaseOf(run))
	}
	if !equality.Semantic.DeepEqual(status, &plan.Status) {
		// Locked to the version read: a merge patch from a cache that is
		// behind leaves out what it thinks unchanged, and the server keeps
		// a newer value there (a phase under conditions that contradict
		// it). A conflict is looked at again from a fresher cache.
		patch := client.MergeFromWithOptions(plan.DeepCopy(), client.MergeFromWithOptimisticLock{})
		plan.Status = *status
		if err := r.client.Status().Patch(ctx, plan, patch); apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		} else if err != nil {
			return ctrl.Result{}, fmt.Errorf("write the status of UpgradePlan %s: %w", key, err)
		}
		r.answered.saved(plan.UID, status.HandledActions)
	}
	res := ctrl.Result{RequeueAfter: dec.RequeueAfter}
	if dec.Handles != nil {
		res.RequeueAfter = time.Millisecond // answer the next request, if any
	}
	return res, nil
}

// answer is the plan's status with the request handled (if any)
// recorded, and an event saying whether it was acted on.
func (r *Reconciler) answer(plan *v1alpha1.UpgradePlan, h *Request, refusal string) *v1alpha1.UpgradePlanStatus {
	status := plan.Status.DeepCopy()
	if h == nil {
		return status
	}
	status.HandledActions = r.answered.with(plan.UID, status.HandledActions)
	if status.HandledActions == nil {
		status.HandledActions = map[string]string{}
	}
	status.HandledActions[h.Annotation] = h.Value
	if refusal != "" {
		r.recorder.Event(plan, corev1.EventTypeWarning, ReasonActionRefused, clip(redact.Text(fmt.Sprintf("%s=%s: %s", h.Annotation, h.Value, refusal))))
	} else {
		r.recorder.Event(plan, corev1.EventTypeNormal, ReasonActionTaken, clip(redact.Text(fmt.Sprintf("%s=%s", h.Annotation, h.Value))))
	}
	return status
}

// wasApplied tells whether the plan's status records a finished run at
// its generation: its outcome, kept after the run is pruned.
func wasApplied(p *v1alpha1.UpgradePlan) bool {
	st := &p.Status
	return st.Run != "" && st.Phase.Finished() && st.ObservedGeneration == p.Generation
}

// observedGeneration is the generation the status describes: the plan's,
// unless a drive still runs an older one (an edit made mid-run is looked
// at once that drive ends: kstatus shows the plan in progress meanwhile).
func (r *Reconciler) observedGeneration(key types.NamespacedName, plan *v1alpha1.UpgradePlan) int64 {
	if d := r.drives.get(key); d != nil && d.generation < plan.Generation {
		return d.generation
	}
	return plan.Generation
}

// runOf is the plan's run: as the drive last saved it, else as stored;
// nil when the plan never ran, or when the run under its name is not its
// own (engine.OwnedBy).
func (r *Reconciler) runOf(ctx context.Context, key types.NamespacedName) (*v1alpha1.UpgradeRun, error) {
	if d := r.drives.get(key); d != nil {
		if run := d.lastRun(); run != nil {
			return run, nil
		}
	}
	name := engine.RunName(key.Namespace, key.Name)
	run, err := r.session.Store().Get(ctx, name)
	if errors.Is(err, runstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", name, err)
	}
	if !engine.OwnedBy(run, ownerOf(key)) {
		// Not this plan's: it sees none of it (apply says whose it is).
		return nil, nil
	}
	return run, nil
}

// blockedOf is the plan's blocked start: this process's record of it, or
// the one its conditions keep from before a restart.
func (r *Reconciler) blockedOf(key types.NamespacedName, plan *v1alpha1.UpgradePlan) *Blocked {
	if b, ok := r.drives.known(key); ok {
		return b
	}
	return BlockedFromStatus(&plan.Status)
}

// approve records an approval in the run, as approved by who; it
// returns why not, or "".
func (r *Reconciler) approve(ctx context.Context, run, step, who string) string {
	if _, err := r.session.ApproveAs(ctx, run, step, who); err != nil {
		return err.Error()
	}
	return ""
}

// abort stops the run (asking this process's drive, if it drives it); it
// returns why not, or "".
func (r *Reconciler) abort(ctx context.Context, run string) string {
	if _, err := r.session.Abort(ctx, run); err != nil {
		return err.Error()
	}
	return ""
}

// plansOfRun maps a run to the plan it belongs to: its recorded owner.
// A run no UpgradePlan owns (a CLI run, a PlatformUpgrade's hop) wakes
// none; a plan blocked behind it is tried again on its backoff.
func (r *Reconciler) plansOfRun(_ context.Context, obj client.Object) []ctrl.Request {
	run, ok := obj.(*v1alpha1.UpgradeRun)
	if !ok || run.Spec.Owner == nil || run.Spec.Owner.Kind != v1alpha1.PlanKind {
		return nil
	}
	o := run.Spec.Owner
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}}}
}

// conflictRetry is how soon a status patch refused for a newer version is
// tried again: the cache holds the newer one in a moment.
const conflictRetry = 50 * time.Millisecond
