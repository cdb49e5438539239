package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/discovery"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/apps"
	"github.com/upshift-dev/upshift/internal/metrics"
	"github.com/upshift-dev/upshift/internal/runner"
)

// Options configure the controller process (`upshift controller` flags).
type Options struct {
	// Namespace keeps runs, backups and the run lease (the CLI's
	// upshift-system by default), and the leader-election lease.
	Namespace string
	// MetricsAddr serves /metrics over HTTPS to callers allowed `get` on
	// it (a TokenReview and a SubjectAccessReview per scrape); "0" turns
	// it off.
	MetricsAddr string
	// MetricsCertDir holds tls.crt and tls.key; empty: a self-signed
	// certificate made at start.
	MetricsCertDir string
	// ProbeAddr serves /healthz and /readyz (plain HTTP: kubelet probes
	// carry no data); "0" turns it off.
	ProbeAddr string
	// LeaderElection lets one of several replicas act.
	LeaderElection bool
	// LeaderElectionID names the leader-election Lease.
	LeaderElectionID string
	// Lease timings of the leader election; zero takes client-go's
	// defaults (15s, 10s, 2s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// WatchNamespaces limits the plans reconciled to these namespaces;
	// empty: every namespace.
	WatchNamespaces []string
	// SyncPeriod re-lists every plan this often, so a plan whose run
	// changed outside the controller (the CLI) is looked at again.
	SyncPeriod time.Duration
	// Runner are the session options of every drive (run lease timing,
	// kept runs).
	Runner runner.Options
	// AppPoll is how often an AppRollout waiting on the cluster (a Job,
	// pods becoming ready) looks again.
	AppPoll time.Duration
	// Fleet tunes the ClusterVersion controller; Plugins dials their ops
	// plugins (nil: ClusterVersions are not reconciled).
	Fleet   FleetOptions
	Plugins PluginDialer

	// self is the controller's own standing, told at start.
	self self
}

// DefaultLeaderElectionID names the leader-election Lease.
const DefaultLeaderElectionID = "upshift-controller"

// Scheme knows the types the controller reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Run runs the controller until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) error {
	if o.Namespace == "" {
		o.Namespace = runner.DefaultNamespace
	}
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = DefaultLeaderElectionID
	}
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	ctrl.SetLogger(log)
	metrics.Register(ctrlmetrics.Registry)
	mgr, err := ctrl.NewManager(cfg, managerOptions(o, scheme, log))
	if err != nil {
		return fmt.Errorf("start the controller manager: %w", err)
	}
	o.Runner.Namespace = o.Namespace
	me, err := whoAmI(ctx, cfg)
	if err != nil {
		log.Error(err, "resources in the controller's namespace are refused; one naming its ServiceAccount from elsewhere cannot be told")
	}
	o.self = self{namespace: o.Namespace, user: me}
	if err := addPlanController(mgr, cfg, o, log); err != nil {
		return err
	}
	if err := addPlatformController(mgr, cfg, o, log); err != nil {
		return err
	}
	if err := addFleetController(mgr, cfg, o, log); err != nil {
		return err
	}
	if err := addAppController(mgr, cfg, o, log); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// managerOptions are the controller manager's options: its metrics and
// probes, leader election, and what its cache watches.
func managerOptions(o Options, scheme *runtime.Scheme, log logr.Logger) ctrl.Options {
	mo := ctrl.Options{
		Scheme: scheme,
		Logger: log,
		Metrics: metricsserver.Options{
			BindAddress:    o.MetricsAddr,
			SecureServing:  true,
			CertDir:        o.MetricsCertDir,
			FilterProvider: filters.WithAuthenticationAndAuthorization,
		},
		HealthProbeBindAddress:        o.ProbeAddr,
		LeaderElection:                o.LeaderElection,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionNamespace:       o.Namespace,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cache.Options{},
	}
	// Runs are watched in the runs namespace only: a run the CLI moves
	// (upshift abort, rollback, approve) shows in its plan's status.
	mo.Cache.ByObject = map[client.Object]cache.ByObject{
		&v1alpha1.UpgradeRun{}: {Namespaces: map[string]cache.Config{o.Namespace: {}}},
	}
	// The fleet controller keeps its fleets' status in memory and reads it
	// from the API server when it starts on one: the cache holds the
	// rest, not a line per cluster copied on every read. A default
	// transform (it leaves other kinds alone), not a ByObject entry: that
	// needs the kind's mapping when the manager is made, and the
	// controller runs without the ClusterVersion CRD too.
	mo.Cache.DefaultTransform = withoutFleetStatus
	if len(o.WatchNamespaces) > 0 {
		mo.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.WatchNamespaces {
			mo.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	if o.SyncPeriod > 0 {
		mo.Cache.SyncPeriod = &o.SyncPeriod
	}
	if o.LeaseDuration > 0 {
		mo.LeaseDuration = &o.LeaseDuration
	}
	if o.RenewDeadline > 0 {
		mo.RenewDeadline = &o.RenewDeadline
	}
	if o.RetryPeriod > 0 {
		mo.RetryPeriod = &o.RetryPeriod
	}
	return mo
}

// addPlanController reconciles UpgradePlans, and their runs the CLI moves.
func addPlanController(mgr ctrl.Manager, cfg *rest.Config, o Options, log logr.Logger) error {
	r, err := NewReconciler(mgr.GetClient(), cfg, mgr.GetEventRecorderFor("upshift-controller"), log.WithName("drive"), o.Runner)
	if err != nil {
		return err
	}
	r.self = o.self
	if err := mgr.Add(r); err != nil {
		return err
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("upgradeplan").
		For(&v1alpha1.UpgradePlan{}, builder.WithPredicates(planChanges())).
		WatchesRawSource(source.Channel(r.wake, &handler.EnqueueRequestForObject{})).
		Watches(&v1alpha1.UpgradeRun{}, handler.EnqueueRequestsFromMapFunc(r.plansOfRun)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the UpgradePlan controller: %w", err)
	}
	return nil
}

// Reconciles follow what people change (the spec, the action
// annotations) and the periodic re-list, not the controller's own status
// writes, which would only wake it for nothing.
func planChanges() predicate.Predicate {
	return predicate.Or(
		predicate.GenerationChangedPredicate{},
		predicate.AnnotationChangedPredicate{},
		predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				// A re-list delivers the object unchanged; a deletion
				// waits on the finalizer.
				return e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() ||
					(e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil)
			},
			CreateFunc:  func(event.CreateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		},
	)
}

// served tells whether the API server serves a resource of upshift.dev.
func served(cfg *rest.Config, resource string) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	list, err := dc.ServerResourcesForGroupVersion(v1alpha1.APIVersion)
	if err != nil {
		return false, nil
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, nil
		}
	}
	return false, nil
}

// addPlatformController reconciles PlatformUpgrades, when their CRD is
// installed: a cluster that installed an earlier Upshift's CRDs keeps its
// UpgradePlans reconciled, and the log says what to install.
func addPlatformController(mgr ctrl.Manager, cfg *rest.Config, o Options, log logr.Logger) error {
	ok, err := served(cfg, "platformupgrades")
	if err != nil {
		return err
	}
	if !ok {
		log.Info("the PlatformUpgrade CRD is not installed: PlatformUpgrades are not reconciled (upshift crds | kubectl apply -f -)")
		return nil
	}
	r, err := NewPlatformReconciler(mgr.GetClient(), cfg, mgr.GetEventRecorderFor("upshift-controller"), log.WithName("platform"), o.Runner)
	if err != nil {
		return err
	}
	r.self = o.self
	if err := mgr.Add(r); err != nil {
		return err
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("platformupgrade").
		For(&v1alpha1.PlatformUpgrade{}, builder.WithPredicates(planChanges())).
		WatchesRawSource(source.Channel(r.wake, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the PlatformUpgrade controller: %w", err)
	}
	return nil
}

// addFleetController reconciles ClusterVersions, when their CRD is
// installed, as addPlatformController does PlatformUpgrades.
func addFleetController(mgr ctrl.Manager, cfg *rest.Config, o Options, log logr.Logger) error {
	if o.Plugins == nil {
		return nil
	}
	ok, err := served(cfg, "clusterversions")
	if err != nil {
		return err
	}
	if !ok {
		log.Info("the ClusterVersion CRD is not installed: fleets are not reconciled (upshift crds | kubectl apply -f -)")
		return nil
	}
	fo := o.Fleet
	fo.Runner = o.Runner // member runs keep their records where plans' runs do, on each member
	r := NewFleetReconciler(mgr.GetClient(), mgr.GetAPIReader(), cfg, mgr.GetEventRecorderFor("upshift-controller"), log.WithName("fleet"), o.Plugins, fo)
	r.self = o.self
	if err := mgr.Add(r.waits); err != nil {
		return err
	}
	if err := mgr.Add(r.members); err != nil {
		return err
	}
	// On the way out, what the fleets' reconciles decided is saved: a
	// stopping controller leaves no operation it started unrecorded.
	err = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.Flush(flush)
		return nil
	}))
	if err != nil {
		return err
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("clusterversion").
		For(&v1alpha1.ClusterVersion{}, builder.WithPredicates(planChanges())).
		WatchesRawSource(source.Channel(r.waits.wake, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the ClusterVersion controller: %w", err)
	}
	return nil
}

// addAppController reconciles AppRollouts, when their CRD is installed,
// each acting as its spec.serviceAccountName.
func addAppController(mgr ctrl.Manager, cfg *rest.Config, o Options, log logr.Logger) error {
	ok, err := served(cfg, "approllouts")
	if err != nil {
		return err
	}
	if !ok {
		log.Info("the AppRollout CRD is not installed: AppRollouts are not reconciled (upshift crds | kubectl apply -f -)")
		return nil
	}
	tenants := apps.NewTenants(func(namespace, sa string) *rest.Config {
		return impersonating(cfg, serviceAccountUser(namespace, sa))
	})
	r := apps.NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), tenants, mgr.GetEventRecorderFor("upshift-controller"), log.WithName("apps"), apps.Options{
		Poll:   o.AppPoll,
		Egress: o.Runner.Egress,
		Refuse: func(namespace, sa string) string {
			return o.self.refusal(v1alpha1.AppRolloutKind, namespace, sa, "spec.serviceAccountName")
		},
	})
	if err := r.SetupWithManager(context.Background(), mgr, planChanges()); err != nil {
		return fmt.Errorf("set up the AppRollout controller: %w", err)
	}
	return nil
}
