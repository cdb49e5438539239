package apps

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/metrics"
)

// Options tune the AppRollout reconciler.
type Options struct {
	// Poll is how often a rollout that waits on the cluster (a Job, pods
	// becoming ready) looks again (default 2s).
	Poll time.Duration
	// Refuse says why a rollout of namespace acting as ServiceAccount sa
	// may not act at all ("" when it may): the controller's own
	// namespace and ServiceAccount are never lent.
	Refuse func(namespace, sa string) string
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
	// Egress bounds the hosts the analyses' metrics may reach (the
	// controller's --gate-hosts).
	Egress egress.Policy
}

// Reconciler reconciles AppRollouts.
type Reconciler struct {
	cached  client.Client // AppRollouts, from the shared cache
	fresh   client.Reader // the API server itself
	tenants *Tenants
	events  record.EventRecorder
	log     logr.Logger
	o       Options
}

// NewReconciler builds a Reconciler: c reads AppRollouts from the cache
// and writes their status, fresh reads them from the API server, and
// tenants are the rollouts' ServiceAccounts' clients.
func NewReconciler(c client.Client, fresh client.Reader, t *Tenants, events record.EventRecorder, log logr.Logger, o Options) *Reconciler {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Refuse == nil {
		o.Refuse = func(string, string) string { return "" }
	}
	return &Reconciler{cached: c, fresh: fresh, tenants: t, events: events, log: log, o: o}
}

// conflictRetry is how soon a status write refused for a newer version
// is decided again, from a cache that has seen it by then.
const conflictRetry = 50 * time.Millisecond

// Reconcile observes one rollout, decides, acts, and saves the status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &v1alpha1.AppRollout{}
	if err := r.cached.Get(ctx, req.NamespacedName, app); err != nil {
		if client.IgnoreNotFound(err) == nil {
			metrics.SetApp(req.String(), "")
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before, next, err := r.groupOf(ctx, app)
	if err != nil {
		return ctrl.Result{}, err
	}
	if app.DeletionTimestamp != nil {
		metrics.SetApp(req.String(), "")
		return ctrl.Result{}, nil
	}
	if Idle(app, before, next) {
		metrics.SetApp(req.String(), app.Status.Phase)
		return ctrl.Result{}, nil
	}
	if why := r.o.Refuse(app.Namespace, app.Spec.ServiceAccountName); why != "" {
		return r.refused(ctx, app, why)
	}
	if mayStart(app.Status.Phase) {
		if errs := Validate(app, r.o.Egress); len(errs) > 0 {
			return r.refused(ctx, app, errs.ToAggregate().Error()+": fix the rollout; nothing was changed")
		}
	}
	t, err := r.tenants.of(app)
	if err != nil {
		return ctrl.Result{}, err
	}
	d, o, err := r.decide(ctx, t, app, before, next)
	if err != nil {
		return r.unavailable(ctx, app, err)
	}
	if err := act(ctx, t, o, &d); err != nil {
		return r.unavailable(ctx, o.App, fmt.Errorf("%s: %w", d.Action, err))
	}
	if err := r.save(ctx, o.App, d.Status); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	countIn(o, d)
	for _, e := range d.Events {
		typ := corev1.EventTypeNormal
		if e.Warning {
			typ = corev1.EventTypeWarning
		}
		r.events.Event(o.App, typ, e.Reason, e.Message)
	}
	r.log.V(1).Info("decided", "approllout", req.NamespacedName, "action", d.Action.String(), "phase", d.Status.Phase, "requeueAfter", d.RequeueAfter)
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// decide observes and decides. A decision that would write to the
// cluster is made again on the rollout read from the API server when the
// cache's copy was behind it: acting on a status this process already
// moved past would undo its own step.
func (r *Reconciler) decide(ctx context.Context, t tenant, app, before *v1alpha1.AppRollout, next []*v1alpha1.AppRollout) (Decision, Observed, error) {
	now := r.o.Now()
	ms := measure(ctx, app, DueMetrics(app, now), r.o.Egress, t.kube, now)
	o := Observed{App: app, Now: now, Poll: r.o.Poll, Measurements: ms.taken, Pending: ms.pending, Before: before, Next: next}
	if err := observe(ctx, t, &o); err != nil {
		return Decision{}, o, err
	}
	d := Decide(o)
	if d.Action == None {
		return d, o, nil
	}
	latest := &v1alpha1.AppRollout{}
	if err := r.fresh.Get(ctx, client.ObjectKeyFromObject(app), latest); err != nil {
		return Decision{}, o, err
	}
	if latest.ResourceVersion == app.ResourceVersion {
		return d, o, nil
	}
	o = Observed{App: latest, Now: now, Poll: r.o.Poll, Measurements: ms.taken, Pending: ms.pending, Before: before, Next: next}
	if err := observe(ctx, t, &o); err != nil {
		return Decision{}, o, err
	}
	return Decide(o), o, nil
}

// save writes the status when it changed, locked to the version read.
func (r *Reconciler) save(ctx context.Context, app *v1alpha1.AppRollout, st v1alpha1.AppRolloutStatus) error {
	if equality.Semantic.DeepEqual(app.Status, st) {
		return nil
	}
	updated := app.DeepCopy()
	updated.Status = st
	return r.cached.Status().Patch(ctx, updated, client.MergeFromWithOptions(app, client.MergeFromWithOptimisticLock{}))
}

// unavailable records why the rollout could not move (an API error, a
// right its ServiceAccount lacks) and tries again with backoff.
func (r *Reconciler) unavailable(ctx context.Context, app *v1alpha1.AppRollout, cause error) (ctrl.Result, error) {
	st := app.Status.DeepCopy()
	st.Message = cause.Error()
	project(st, app, metav1.NewTime(r.o.Now()))
	if err := r.save(ctx, app, *st); err != nil && !apierrors.IsConflict(err) {
		r.log.Error(err, "save status", "approllout", client.ObjectKeyFromObject(app))
	}
	return ctrl.Result{}, cause
}

// refused stalls a rollout that may not act, saying why.
func (r *Reconciler) refused(ctx context.Context, app *v1alpha1.AppRollout, why string) (ctrl.Result, error) {
	st := app.Status.DeepCopy()
	st.Message = why
	st.ObservedGeneration = app.Generation
	refusedConditions(st, app, metav1.NewTime(r.o.Now()))
	return ctrl.Result{}, r.save(ctx, app, *st)
}

// countIn counts a saved decision in the metrics.
func countIn(o Observed, d Decision) {
	before, after := o.App.Status, d.Status
	metrics.SetApp(o.App.Namespace+"/"+o.App.Name, after.Phase)
	if after.Phase != before.Phase {
		metrics.AppTransitions.WithLabelValues(string(after.Phase)).Inc()
	}
	if d.Action == SetCanary && (after.CanaryStep != before.CanaryStep || before.CanaryStepStartedAt == nil) { // a step's replicas set the first time
		metrics.AppCanarySteps.WithLabelValues(strconv.Itoa(int(after.CanaryWeight))).Inc()
	}
	for _, m := range o.Measurements {
		metrics.AppMeasurements.WithLabelValues(string(m.Phase)).Inc()
	}
}

// mayStart tells a phase from which a rollout may start an attempt: what
// it would start is validated first. A rollout under way is not (its
// rollback must never be held by a spec edited since it began).
func mayStart(p v1alpha1.AppPhase) bool {
	switch p {
	case "", v1alpha1.AppPending, v1alpha1.AppHealthy, v1alpha1.AppRolledBack:
		return true
	}
	return false
}
