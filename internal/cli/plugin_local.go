package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upshift-dev/upshift/pkg/pluginsdk/local"
)

// pluginLocalFlags are `upshift plugin local`'s.
type pluginLocalFlags struct {
	pluginServeFlags
	clusters                                 []string
	masterLatency, drainTimeout, nodeTimeout time.Duration
}

func newPluginLocalCommand() *cobra.Command {
	var f pluginLocalFlags
	cmd := &cobra.Command{
		Use:   "local --cluster ID=KUBECONFIG... --tls-cert FILE --tls-key FILE",
		Short: "Serve clusters of the local control plane as an ops plugin, to try a fleet on one machine",
		Long: `Serve clusters of Upshift's local control plane (upshift cluster up) as
an ops plugin, the same service as upshift plugin sim. A node pool is the
nodes labelled upshift.dev/node-pool; its upgrade cordons each node,
drains it through the eviction API (so PodDisruptionBudgets hold) and
replaces it by one reporting the new kubelet version. The control
plane's version and the in-service flag live in the ConfigMap
kube-system/upshift-local-plugin (a "router" reads its label
upshift.dev/in-service). See docs/plugins.md.

TLS by default: --tls-cert and --tls-key, with --client-ca to require
client certificates (mutual TLS). --insecure serves plaintext, on a
loopback address only.`,
		Example: `  upshift cluster up --name east && upshift cluster up --name west
  upshift plugin local --insecure --listen 127.0.0.1:39001 \
    --cluster east=$HOME/.cache/upshift/clusters/east/kubeconfig \
    --cluster west=$HOME/.cache/upshift/clusters/west/kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPluginLocal(cmd, &f) },
	}
	fl := cmd.Flags()
	f.pluginServeFlags.add(fl)
	fl.StringArrayVar(&f.clusters, "cluster", nil, "ID=KUBECONFIG: a cluster to serve under ID, reached with that kubeconfig's current context (repeatable)")
	fl.DurationVar(&f.masterLatency, "master-latency", time.Second, "how long a control plane upgrade takes")
	fl.DurationVar(&f.drainTimeout, "drain-timeout", 2*time.Minute, "how long the drain of one node may go without a pod leaving it before the node pool's upgrade fails")
	fl.DurationVar(&f.nodeTimeout, "node-ready-timeout", time.Minute, "how long a replaced node may take to be Ready")
	return cmd
}

func runPluginLocal(cmd *cobra.Command, f *pluginLocalFlags) error {
	if _, err := f.transport(); err != nil {
		return err
	}
	clusters, err := f.restConfigs()
	if err != nil {
		return err
	}
	p, err := local.New(local.Config{Clusters: clusters, MasterLatency: f.masterLatency, DrainTimeout: f.drainTimeout, NodeReadyTimeout: f.nodeTimeout})
	if err != nil {
		return err
	}
	return f.serve(cmd, fmt.Sprintf("local plugin: %s", strings.Join(p.IDs(), ", ")), p)
}

// restConfigs reads each --cluster's kubeconfig.
func (f *pluginLocalFlags) restConfigs() (map[string]*rest.Config, error) {
	if len(f.clusters) == 0 {
		return nil, fmt.Errorf("--cluster: give at least one, as ID=KUBECONFIG (upshift cluster up prints where its kubeconfig is)")
	}
	out := map[string]*rest.Config{}
	for _, c := range f.clusters {
		id, path, ok := strings.Cut(c, "=")
		if !ok || id == "" || path == "" {
			return nil, fmt.Errorf("--cluster %q: write it as ID=KUBECONFIG, e.g. east=$HOME/.cache/upshift/clusters/east/kubeconfig", c)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("--cluster %q: cluster %s is given twice; ids are unique", c, id)
		}
		rc, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("--cluster %s: read kubeconfig %s: %w", id, path, err)
		}
		out[id] = rc
	}
	return out, nil
}
