package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/internal/metrics"
	"github.com/upshift-dev/upshift/internal/runner"
)

// PluginEndpoint is where and how to reach a fleet's ops plugin: its
// opsEndpoint with the TLS material of its Secret.
type PluginEndpoint struct {
	Address    string
	Insecure   bool
	CA         []byte
	Cert, Key  []byte
	ServerName string
}

// PluginDialer gives the plugin client of an endpoint, reusing
// connections between reconciles.
type PluginDialer func(ctx context.Context, ep PluginEndpoint) (fleet.Plugin, error)

// FleetReconciler reconciles ClusterVersions: each reconcile is one
// fleet.Step (ask about the operations in flight, read, decide, call,
// record), its status saved as a patch of what changed.
type FleetReconciler struct {
	// self is what no fleet may borrow (self.go).
	self     self
	client   client.Client
	reader   client.Reader
	recorder record.EventRecorder
	log      logr.Logger
	dial     PluginDialer
	// poll is how often operations in flight are asked about.
	poll      time.Duration
	statusTTL time.Duration
	// statuses keeps each fleet's cluster statuses between reconciles,
	// for the availability budget.
	statuses sync.Map // types.NamespacedName → *fleet.StatusCache
	// fleets keeps each fleet's status as decided, written behind the
	// reconciles by writer.
	fleets    sync.Map // types.NamespacedName → *fleetStatus
	writer    *fleetStatusWriter
	endpoints *fleetEndpoints
	waits     *fleetWaits
	// members runs spec.member on member clusters.
	members *memberDrives
}

// FleetOptions tune the fleet controller.
type FleetOptions struct {
	// Poll is how often operations in flight are asked about (default
	// 2s).
	Poll time.Duration
	// StatusTTL is how long a cluster's status read for the availability
	// budget serves (default 10s).
	StatusTTL time.Duration
	// Runner are the session options of member runs (spec.member): their
	// runs namespace and lease timing on each member cluster.
	Runner runner.Options
}

// NewFleetReconciler builds a FleetReconciler. c reads ClusterVersions
// from the cache (their spec and annotations); their status is kept in
// memory as decided (fleetStatus), and reader reads it from the API server
// when a fleet is first seen.
func NewFleetReconciler(c client.Client, reader client.Reader, cfg *rest.Config, rec record.EventRecorder, log logr.Logger, dial PluginDialer, o FleetOptions) *FleetReconciler {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.StatusTTL <= 0 {
		o.StatusTTL = 10 * time.Second
	}
	r := &FleetReconciler{client: c, reader: reader, recorder: rec, log: log, dial: dial, poll: o.Poll, statusTTL: o.StatusTTL, waits: newFleetWaits(o.Poll)}
	r.writer = &fleetStatusWriter{client: c, log: log, wake: r.waits.send}
	clients := newImpersonatedClients(cfg)
	r.endpoints = newFleetEndpoints(clients)
	r.members = newMemberDrives(clients, o.Runner, log.WithName("member"), r.waits.send)
	return r
}

// Reconcile runs one step of a fleet's rollout.
func (r *FleetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	began := time.Now()
	cv := &v1alpha1.ClusterVersion{}
	if err := r.client.Get(ctx, req.NamespacedName, cv); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	fs, err := r.fleetStatus(ctx, cv)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !cv.DeletionTimestamp.IsZero() {
		return r.release(ctx, cv, fs)
	}
	if fs.failure() != nil {
		if err := r.writer.saveNow(ctx, fs); err != nil {
			return ctrl.Result{}, err
		}
	}
	status := fs.current()
	sp, err := fleet.Compile(cv.Spec)
	if err == nil {
		err = validateMember(cv)
	}
	if why := r.self.refusal(v1alpha1.ClusterVersionKind, cv.Namespace, cv.Spec.ServiceAccountName, "spec.serviceAccountName"); err == nil && why != "" {
		err = errors.New(why)
	}
	if err != nil {
		r.invalid(cv, fs, status, err)
		return ctrl.Result{}, nil
	}
	known := time.Since(began)
	p, err := r.plugin(ctx, cv)
	if err != nil {
		r.unreachable(cv, fs, status, err)
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}
	p = withMembers(killAfterCall(p), r.members, cv)
	if err := r.hold(ctx, cv); err != nil {
		return ctrl.Result{}, err
	}
	in := fleet.Inputs{Generation: cv.Generation, Now: time.Now, Statuses: r.statusCache(req.NamespacedName), Watch: r.waits.of(req.NamespacedName),
		StatusBudget: statusBudget(cv), Intend: r.intend(fs)}
	for _, a := range PendingRequests(cv.Annotations, status.HandledActions) {
		switch a.Annotation {
		case v1alpha1.AnnotationApprove:
			in.Approve = a.Value
		case v1alpha1.AnnotationRetry:
			in.Retry = a.Value
		}
	}
	read := time.Since(began)
	res, stepErr := fleet.Step(ctx, p, sp, status, in)
	r.writer.record(fs, res.Status)
	r.log.V(1).Info("stepped", "clusterversion", req.NamespacedName, "phase", res.Status.Phase, "inFlight", res.InFlight,
		"ended", len(res.Ended), "read", known, "dial", read-known, "step", time.Since(began)-read)
	for _, e := range res.Events {
		r.emit(cv, e)
	}
	for _, e := range res.Ended {
		metrics.FleetOperation(e.Type, e.OK)
	}
	if stepErr != nil && !errors.Is(stepErr, fleet.ErrPluginDown) {
		return ctrl.Result{}, stepErr
	}
	return ctrl.Result{RequeueAfter: r.next(ctx, p, req.NamespacedName, res)}, nil
}

// fleetStatus is the fleet's status as this process keeps it; the first
// reconcile of a fleet (or of a fleet deleted and made again) reads it
// from the API server, not the cache, which may not hold a status a
// previous leader saved just before it stopped.
func (r *FleetReconciler) fleetStatus(ctx context.Context, cv *v1alpha1.ClusterVersion) (*fleetStatus, error) {
	key := client.ObjectKeyFromObject(cv)
	if v, ok := r.fleets.Load(key); ok {
		if fs := v.(*fleetStatus); fs.uid == cv.UID {
			return fs, nil
		}
		r.forget(key)
	}
	fresh := &v1alpha1.ClusterVersion{}
	if err := r.reader.Get(ctx, key, fresh); err != nil {
		return nil, fmt.Errorf("read ClusterVersion %s: %w", key, err)
	}
	fs := newFleetStatus(key, fresh.UID, fresh.Status)
	r.fleets.Store(key, fs)
	return fs, nil
}

// forget drops a deleted fleet's state, once its last write is done.
func (r *FleetReconciler) forget(key types.NamespacedName) {
	r.statuses.Delete(key)
	r.endpoints.forget(key)
	r.waits.forget(key)
	r.members.drop(key)
	if v, ok := r.fleets.LoadAndDelete(key); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.writer.flush(ctx, v.(*fleetStatus))
	}
}

// Flush waits, up to the context's end, for every fleet's status writer:
// the controller stopping saves what it decided.
func (r *FleetReconciler) Flush(ctx context.Context) {
	r.fleets.Range(func(_, v any) bool {
		r.writer.flush(ctx, v.(*fleetStatus))
		return ctx.Err() == nil
	})
}

// waitBackstop is how often a fleet whose operations are waited on is
// looked at anyway.
const waitBackstop = 30 * time.Second

// next says when to look at the fleet again: as Step asks, and while
// operations are in flight, when one ends (WaitOperation) or at the next
// poll.
func (r *FleetReconciler) next(ctx context.Context, p fleet.Plugin, key types.NamespacedName, res fleet.Result) time.Duration {
	after := res.RequeueAfter
	if res.InFlight == 0 {
		return after
	}
	every := r.poll
	if p.Capabilities(ctx).Wait {
		r.waits.follow(p, key, res.Status)
		every = waitBackstop
	}
	if after == 0 || after > every {
		after = every
	}
	return after
}

// statusBudget is how many bytes the fleet's status may take:
// fleet.MaxObjectBytes less the rest of the object (its spec and
// metadata, managedFields and annotations included, as the cache holds
// them: without the status).
func statusBudget(cv *v1alpha1.ClusterVersion) int {
	m, _ := json.Marshal(cv.ObjectMeta)
	s, _ := json.Marshal(cv.Spec)
	return max(1, fleet.MaxObjectBytes-len(m)-len(s)-len(`{"apiVersion":"upshift.dev/v1alpha1","kind":"ClusterVersion","metadata":,"spec":,"status":}`))
}

func (r *FleetReconciler) statusCache(key types.NamespacedName) *fleet.StatusCache {
	c, _ := r.statuses.LoadOrStore(key, fleet.NewStatusCache(r.statusTTL))
	return c.(*fleet.StatusCache)
}

// plugin dials the fleet's ops plugin with the TLS material of its
// Secret, read as the fleet's ServiceAccount.
func (r *FleetReconciler) plugin(ctx context.Context, cv *v1alpha1.ClusterVersion) (fleet.Plugin, error) {
	ep, err := r.endpoints.of(ctx, cv)
	if err != nil {
		return nil, err
	}
	p, err := r.dial(ctx, ep)
	if err != nil {
		return nil, fmt.Errorf("spec.opsEndpoint: %w", err)
	}
	return p, nil
}

// invalid records a spec the controller cannot roll: Stalled until an
// edit.
func (r *FleetReconciler) invalid(cv *v1alpha1.ClusterVersion, fs *fleetStatus, st v1alpha1.ClusterVersionStatus, err error) {
	now := metav1.Now()
	for _, c := range []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: ReasonInvalidSpec, Message: err.Error()},
		{Type: v1alpha1.ConditionReconciling, Status: metav1.ConditionFalse, Reason: ReasonInvalidSpec, Message: err.Error()},
		{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: ReasonInvalidSpec, Message: err.Error()},
	} {
		c.ObservedGeneration, c.LastTransitionTime = cv.Generation, now
		meta.SetStatusCondition(&st.Conditions, c)
	}
	if st.Message != err.Error() {
		r.recorder.Event(cv, corev1.EventTypeWarning, ReasonInvalidSpec, err.Error())
	}
	st.Message, st.ObservedGeneration = err.Error(), cv.Generation
	r.writer.record(fs, st)
}

// unreachable records a plugin that could not even be dialled (its TLS
// Secret unreadable, its material invalid) as a plugin that is down.
func (r *FleetReconciler) unreachable(cv *v1alpha1.ClusterVersion, fs *fleetStatus, st v1alpha1.ClusterVersionStatus, err error) {
	for _, e := range fleet.PluginDown(&st, err, time.Now()) {
		r.emit(cv, e)
	}
	r.writer.record(fs, st)
}

// emit records one of the rollout's events on the ClusterVersion.
func (r *FleetReconciler) emit(cv *v1alpha1.ClusterVersion, e fleet.Event) {
	kind := corev1.EventTypeNormal
	if e.Warning {
		kind = corev1.EventTypeWarning
	}
	r.recorder.Event(cv, kind, e.Reason, e.Message)
}

// ReasonInvalidSpec: the fleet's spec cannot be rolled (a wave names a
// cluster the fleet lacks, a cluster is in no wave).
const ReasonInvalidSpec = "InvalidSpec"
