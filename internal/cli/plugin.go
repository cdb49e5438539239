package cli

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

func newPluginCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Run an ops plugin (the gRPC service through which the fleet controller operates clusters)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newPluginSimCommand(), newPluginLocalCommand())
	return cmd
}

// pluginServeFlags are where and how a plugin command serves.
type pluginServeFlags struct {
	listen                    string
	tlsCert, tlsKey, clientCA string
	insecure                  bool
}

func (f *pluginServeFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.listen, "listen", "127.0.0.1:39000", "address to serve on (host:port; port 0 picks one)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "serving certificate (PEM); with --tls-key")
	fl.StringVar(&f.tlsKey, "tls-key", "", "serving key (PEM); with --tls-cert")
	fl.StringVar(&f.clientCA, "client-ca", "", "CA certificates (PEM) whose client certificates are required (mutual TLS)")
	fl.BoolVar(&f.insecure, "insecure", false, "serve plaintext (only on a loopback --listen address)")
}

// serve serves the plugin until the command's context ends, after one
// line saying what it serves (its first words given by what) and where.
func (f *pluginServeFlags) serve(cmd *cobra.Command, what string, c pluginsdk.Cluster) error {
	transport, err := f.transport()
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", f.listen, err)
	}
	mode := "TLS"
	switch {
	case f.insecure:
		mode = "plaintext (--insecure)"
	case f.clientCA != "":
		mode = "mutual TLS"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s on %s, %s\n", what, lis.Addr(), mode)
	return pluginsdk.Serve(cmd.Context(), lis, c, transport)
}

// pluginSimFlags are `upshift plugin sim`'s.
type pluginSimFlags struct {
	pluginServeFlags
	clusters, nodePools int
	version             string
	latency, jitter     time.Duration
	fail                []string
	failureRate         float64
	flapEvery, flapDown time.Duration
	flapProbability     float64
	seed                uint64
}

func newPluginSimCommand() *cobra.Command {
	var f pluginSimFlags
	cmd := &cobra.Command{
		Use:   "sim --tls-cert FILE --tls-key FILE",
		Short: "Serve simulated clusters as an ops plugin, for trying and benchmarking the fleet controller",
		Long: `Serve simulated clusters as an ops plugin: the multicluster upgrade
operator's plugin.Cluster service and Upshift's upshift.ops.v1.Ops, over
gRPC. The clusters live in memory (sim-0001, sim-0002, ...); operations
take --latency, fail as --fail and --failure-rate say, and follow a
cloud's rules (one upgrade at a time per cluster, no node pool newer than
its control plane). See docs/plugins.md.

TLS by default: --tls-cert and --tls-key, with --client-ca to require
client certificates (mutual TLS). --insecure serves plaintext, on a
loopback address only.`,
		Example: `  upshift plugin sim --clusters 3 --latency 2s --fail UpgradeNodePool:sim-0002 \
    --tls-cert tls.crt --tls-key tls.key --client-ca ca.crt
  upshift plugin sim --listen 127.0.0.1:39000 --insecure`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPluginSim(cmd, &f) },
	}
	fl := cmd.Flags()
	f.pluginServeFlags.add(fl)
	fl.IntVar(&f.clusters, "clusters", 3, "how many clusters to simulate (sim-0001, sim-0002, ...)")
	fl.IntVar(&f.nodePools, "node-pools", sim.DefaultNodePools, "node pools per cluster (pool-1, pool-2, ...)")
	fl.StringVar(&f.version, "version", sim.DefaultVersion, "the Kubernetes version every cluster runs at start")
	fl.DurationVar(&f.latency, "latency", 0, "how long every operation runs")
	fl.DurationVar(&f.jitter, "jitter", 0, "up to this much more, at random, per operation")
	fl.StringArrayVar(&f.fail, "fail", nil, "OPERATION:CLUSTER[:AFTER]: fail that operation on that cluster after AFTER successes (repeatable; OPERATION one of "+strings.Join(sim.OperationTypes(), ", ")+"; an empty part matches any)")
	fl.Float64Var(&f.failureRate, "failure-rate", 0, "probability that any operation fails")
	fl.DurationVar(&f.flapEvery, "flap-every", time.Minute, "with --flap-probability: the window in which a cluster may flap once")
	fl.DurationVar(&f.flapDown, "flap-down", 10*time.Second, "with --flap-probability: how long a flapping cluster is unavailable")
	fl.Float64Var(&f.flapProbability, "flap-probability", 0, "probability that a cluster is unavailable for --flap-down in each --flap-every")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the jitter, the failure rate and the flaps")
	return cmd
}

func runPluginSim(cmd *cobra.Command, f *pluginSimFlags) error {
	if _, err := f.transport(); err != nil {
		return err // before building thousands of clusters
	}
	cfg, err := f.simConfig()
	if err != nil {
		return err
	}
	s, err := sim.New(cfg)
	if err != nil {
		return err
	}
	ids := s.IDs()
	return f.serve(cmd, fmt.Sprintf("sim plugin: %d clusters (%s … %s)", len(ids), ids[0], ids[len(ids)-1]), s)
}

// transport is TLS from the files, or plaintext when --insecure was
// asked on a loopback address.
func (f *pluginServeFlags) transport() (pluginsdk.ServeOption, error) {
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: write it as host:port (127.0.0.1:39000, :39000)", f.listen)
	}
	if f.insecure {
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("--insecure with --listen %s: plaintext is served on a loopback address only (127.0.0.1:PORT); leave --insecure out and give --tls-cert and --tls-key", f.listen)
		}
		if f.tlsCert != "" || f.tlsKey != "" || f.clientCA != "" {
			return nil, errors.New("--insecure and --tls-cert/--tls-key/--client-ca: choose one")
		}
		return pluginsdk.Insecure(), nil
	}
	if f.tlsCert == "" || f.tlsKey == "" {
		return nil, errors.New("no TLS: give --tls-cert and --tls-key (and --client-ca for mutual TLS), or --insecure on a loopback --listen address")
	}
	cfg, err := pluginsdk.ServerTLSFromFiles(f.tlsCert, f.tlsKey, f.clientCA)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key/--client-ca: %w", err)
	}
	return pluginsdk.WithTLS(cfg), nil
}

func (f *pluginSimFlags) simConfig() (sim.Config, error) {
	if f.clusters < 1 {
		return sim.Config{}, fmt.Errorf("--clusters %d: simulate at least one", f.clusters)
	}
	cfg := sim.Config{
		Count:       f.clusters,
		NodePools:   f.nodePools,
		Version:     f.version,
		Latency:     map[string]time.Duration{},
		Jitter:      f.jitter,
		FailureRate: f.failureRate,
		Seed:        f.seed,
	}
	for _, typ := range sim.OperationTypes() {
		cfg.Latency[typ] = f.latency
	}
	if f.flapProbability > 0 {
		cfg.Flaps = sim.Flaps{Every: f.flapEvery, Down: f.flapDown, Probability: f.flapProbability}
	}
	for _, spec := range f.fail {
		rule, err := parseFailure(spec)
		if err != nil {
			return sim.Config{}, err
		}
		cfg.Failures = append(cfg.Failures, rule)
	}
	return cfg, nil
}

// parseFailure reads OPERATION:CLUSTER[:AFTER].
func parseFailure(spec string) (sim.Failure, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return sim.Failure{}, fmt.Errorf("--fail %q: write it as OPERATION:CLUSTER[:AFTER], e.g. UpgradeNodePool:sim-0002 or ServiceOut::2", spec)
	}
	rule := sim.Failure{Operation: parts[0], Cluster: parts[1]}
	if len(parts) == 3 {
		n, err := strconv.Atoi(parts[2])
		if err != nil || n < 0 {
			return sim.Failure{}, fmt.Errorf("--fail %q: AFTER is how many of those operations succeed first (0, 1, ...)", spec)
		}
		rule.After = n
	}
	return rule, nil
}
