package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/upshift-dev/upshift/internal/controller"
	"github.com/upshift-dev/upshift/internal/plugin"
	"github.com/upshift-dev/upshift/internal/runner"
)

func newControllerCommand(kf *kubeFlags) *cobra.Command {
	var o controller.Options
	var syncSeconds int
	var debug bool
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the in-cluster controller that drives UpgradePlans, PlatformUpgrades, ClusterVersions and AppRollouts",
		Long: `Run the controller: it reconciles UpgradePlan resources in every namespace,
driving each plan's run with the same engine as upshift apply, as the plan's
spec.serviceAccountName (impersonated; empty means the namespace's "default"
ServiceAccount). Runs, backups and the run lease live in --namespace, with
the CLI's: upshift status, approve, abort and rollback work on its runs.

It also rolls fleets: each ClusterVersion's clusters through its ops plugin
(docs/fleets.md), and applications: each AppRollout's Deployment through its
migration and canary steps, as the rollout's spec.serviceAccountName
(docs/apps.md).

Operator actions on a plan are annotations:
  kubectl annotate upgradeplan NAME upshift.dev/approve=STEP
  kubectl annotate upgradeplan NAME upshift.dev/abort=$(date +%s)
  kubectl annotate upgradeplan NAME upshift.dev/rollback=$(date +%s)
  kubectl annotate upgradeplan NAME upshift.dev/retry=$(date +%s)
and on an AppRollout:
  kubectl annotate approllout NAME upshift.dev/promote=$(date +%s)
  kubectl annotate approllout NAME upshift.dev/abort=$(date +%s)
  kubectl annotate approllout NAME upshift.dev/retry=$(date +%s)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if syncSeconds < 0 {
				return fmt.Errorf("--sync-period-seconds %d: use 0 (the default, 10 hours) or more", syncSeconds)
			}
			o.SyncPeriod = time.Duration(syncSeconds) * time.Second
			o.Runner.AllowHTTPSources = kf.allowHTTP
			if o.Namespace == "" {
				o.Namespace = os.Getenv("POD_NAMESPACE")
			}
			cfg, err := kf.restConfig()
			if err != nil {
				return err
			}
			log := zap.New(zap.UseDevMode(debug), zap.WriteTo(cmd.ErrOrStderr()))
			klog.SetLogger(log) // client-go's leader election logs through klog
			dial, closePlugins := controller.PluginPool(plugin.Options{})
			defer func() { _ = closePlugins() }()
			o.Plugins = dial
			err = controller.Run(cmd.Context(), cfg, o, log)
			if err != nil && !errors.Is(err, cmd.Context().Err()) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Namespace, "namespace", "", "where runs, backups and the leases live (default: $POD_NAMESPACE, else "+runner.DefaultNamespace+")")
	f.StringSliceVar(&o.WatchNamespaces, "watch-namespaces", nil, "reconcile plans in these namespaces only (comma-separated; default: all)")
	f.StringVar(&o.MetricsAddr, "metrics-addr", ":8080", "address of the HTTPS /metrics endpoint (callers need get on /metrics); 0 turns it off")
	f.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for /metrics (default: a self-signed certificate)")
	f.StringVar(&o.ProbeAddr, "health-probe-addr", ":8081", "address of /healthz and /readyz; 0 turns it off")
	f.BoolVar(&o.LeaderElection, "enable-leader-election", false, "elect one acting replica with a Lease (run more than one replica only with this)")
	f.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a leader's Lease lasts without renewal")
	f.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader tries to renew before it steps down")
	f.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often candidates try to take the Lease")
	f.IntVar(&syncSeconds, "sync-period-seconds", 0, "re-list every plan this often, to notice runs changed outside the controller (0: 10 hours)")
	f.BoolVar(&debug, "debug", false, "log every decision, in a human-readable format")
	f.DurationVar(&o.Runner.LeaseDuration, "lease-duration", 10*time.Second, "how long a run's lease lasts without renewal")
	f.DurationVar(&o.Runner.LeaseRenew, "lease-renew", 2*time.Second, "how often a run's lease is renewed")
	f.IntVar(&o.Runner.KeepRuns, "keep-runs", 10, "finished runs (and their backups) kept per cluster")
	f.StringSliceVar(&o.Runner.Egress.Hosts, "gate-hosts", nil, "hosts that plans' http gates and metrics may reach from the controller: names, IPs or *.suffix, comma-separated (default: any; set it on a cluster teams share). Link-local addresses, where clouds serve their metadata, are refused always")
	f.DurationVar(&o.AppPoll, "app-poll", 2*time.Second, "how often an AppRollout waiting on the cluster (a migration Job, pods becoming ready) looks again")
	f.DurationVar(&o.Fleet.Poll, "fleet-poll", 2*time.Second, "how often a fleet's operations in flight are asked about, when its ops plugin cannot wait on them")
	f.DurationVar(&o.Fleet.StatusTTL, "fleet-status-ttl", 10*time.Second, "how long a cluster's status read for a fleet's availability budget serves before it is read again")
	return cmd
}
