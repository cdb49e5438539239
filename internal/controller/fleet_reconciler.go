package controller

import (
	"context"
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
	"k8s.io/client-go/kubernetes"
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
	client   client.Client
	reader   client.Reader
	config   *rest.Config
	recorder record.EventRecorder
	log      logr.Logger
	dial     PluginDialer
	// poll is how often operations in flight are asked about.
	poll      time.Duration
	statusTTL time.Duration
	// statuses keeps each fleet's cluster statuses between reconciles,
	// for the availability budget.
	statuses sync.Map // types.NamespacedName → *fleet.StatusCache
	waits    *fleetWaits
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

// NewFleetReconciler builds a FleetReconciler. reader reads
// ClusterVersions from the API server, not the cache: a status written
// by the last reconcile is what the next one decides on, or an operation
// it started could be started again.
func NewFleetReconciler(c client.Client, reader client.Reader, cfg *rest.Config, rec record.EventRecorder, log logr.Logger, dial PluginDialer, o FleetOptions) *FleetReconciler {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.StatusTTL <= 0 {
		o.StatusTTL = 10 * time.Second
	}
	r := &FleetReconciler{client: c, reader: reader, config: cfg, recorder: rec, log: log, dial: dial, poll: o.Poll, statusTTL: o.StatusTTL, waits: newFleetWaits()}
	r.members = newMemberDrives(cfg, o.Runner, log.WithName("member"), r.waits.send)
	return r
}

// Reconcile runs one step of a fleet's rollout.
func (r *FleetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	began := time.Now()
	cv := &v1alpha1.ClusterVersion{}
	if err := r.reader.Get(ctx, req.NamespacedName, cv); err != nil {
		if apierrors.IsNotFound(err) {
			r.statuses.Delete(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	sp, err := fleet.Compile(cv.Spec)
	if err == nil {
		err = validateMember(cv)
	}
	if err != nil {
		return ctrl.Result{}, r.invalid(ctx, cv, err)
	}
	p, err := r.plugin(ctx, cv)
	if err != nil {
		return ctrl.Result{RequeueAfter: 30 * time.Second}, r.unreachable(ctx, cv, err)
	}
	p = withMembers(p, r.members, cv)
	in := fleet.Inputs{Generation: cv.Generation, Now: time.Now, Statuses: r.statusCache(req.NamespacedName)}
	for _, a := range PendingRequests(cv.Annotations, cv.Status.HandledActions) {
		switch a.Annotation {
		case v1alpha1.AnnotationApprove:
			in.Approve = a.Value
		case v1alpha1.AnnotationRetry:
			in.Retry = a.Value
		}
	}
	read := time.Since(began)
	res, stepErr := fleet.Step(ctx, p, sp, cv.Status, in)
	stepped := time.Since(began)
	if err := r.save(ctx, cv, res.Status); err != nil {
		return ctrl.Result{}, err
	}
	r.log.V(1).Info("stepped", "clusterversion", req.NamespacedName, "phase", res.Status.Phase, "inFlight", res.InFlight,
		"ended", len(res.Ended), "read", read, "step", stepped-read, "save", time.Since(began)-stepped)
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

func (r *FleetReconciler) statusCache(key types.NamespacedName) *fleet.StatusCache {
	c, _ := r.statuses.LoadOrStore(key, fleet.NewStatusCache(r.statusTTL))
	return c.(*fleet.StatusCache)
}

// plugin dials the fleet's ops plugin with the TLS material of its
// Secret, read as the fleet's ServiceAccount.
func (r *FleetReconciler) plugin(ctx context.Context, cv *v1alpha1.ClusterVersion) (fleet.Plugin, error) {
	ep := PluginEndpoint{Address: cv.Spec.OpsEndpoint.Endpoint, Insecure: cv.Spec.OpsEndpoint.Insecure, ServerName: cv.Spec.OpsEndpoint.ServerName}
	if ref := cv.Spec.OpsEndpoint.TLSSecretRef; ref != nil {
		cs, err := kubernetes.NewForConfig(impersonating(r.config, serviceAccountUser(cv.Namespace, cv.Spec.ServiceAccountName)))
		if err != nil {
			return nil, err
		}
		s, err := cs.CoreV1().Secrets(cv.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("spec.opsEndpoint.tlsSecretRef: read Secret %s as %s: %w", ref.Name, serviceAccountUser(cv.Namespace, cv.Spec.ServiceAccountName), err)
		}
		ep.CA, ep.Cert, ep.Key = s.Data["ca.crt"], s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	}
	p, err := r.dial(ctx, ep)
	if err != nil {
		return nil, fmt.Errorf("spec.opsEndpoint: %w", err)
	}
	return p, nil
}

// invalid records a spec the controller cannot roll: Stalled until an
// edit.
func (r *FleetReconciler) invalid(ctx context.Context, cv *v1alpha1.ClusterVersion, err error) error {
	st := *cv.Status.DeepCopy()
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
	return r.save(ctx, cv, st)
}

// unreachable records a plugin that could not even be dialled (its TLS
// Secret unreadable, its material invalid) as a plugin that is down.
func (r *FleetReconciler) unreachable(ctx context.Context, cv *v1alpha1.ClusterVersion, err error) error {
	st := *cv.Status.DeepCopy()
	for _, e := range fleet.PluginDown(&st, err, time.Now()) {
		r.emit(cv, e)
	}
	return r.save(ctx, cv, st)
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

// save patches the status with what changed.
func (r *FleetReconciler) save(ctx context.Context, cv *v1alpha1.ClusterVersion, st v1alpha1.ClusterVersionStatus) error {
	patch, err := fleet.StatusPatch(cv.Status, st)
	if err != nil || patch == nil {
		return err
	}
	if err := r.client.Status().Patch(ctx, cv, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return fmt.Errorf("save the status of ClusterVersion %s/%s: %w", cv.Namespace, cv.Name, err)
	}
	return nil
}
