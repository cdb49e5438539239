package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"sigs.k8s.io/yaml"
)

func newClusterCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Run a real local Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok nodes)",
		Long: `Run a real local Kubernetes control plane for demos and tests.

The binaries (Kubernetes ` + localcluster.KubernetesVersion + `, etcd ` + localcluster.EtcdVersion + `, kwok ` + localcluster.KwokVersion + `, helm ` + localcluster.HelmVersion + `) are built from the
Go module proxy on first use into the user cache directory (about 9 minutes on 2 cores; needs Go).
Nodes are kwok fake nodes: pods become Running and Ready without containers.`,
	}
	cmd.AddCommand(newClusterUpCommand(), newClusterDownCommand(), newClusterStatusCommand(), newClusterBuildCommand())
	return cmd
}

func newClusterUpCommand() *cobra.Command {
	o := localcluster.Options{Detached: true}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local cluster that runs until `upshift cluster down`",
		Example: `  upshift cluster up
  upshift cluster up --name second --nodes 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Progress = cmd.ErrOrStderr()
			c, err := localcluster.Start(cmd.Context(), o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "cluster %q is up: %d nodes, API server %s\n", c.Name, c.Nodes, c.Server)
			fmt.Fprintf(out, "kubeconfig: %s\n", c.KubeconfigPath())
			fmt.Fprintf(out, "export KUBECONFIG=%s\n", c.KubeconfigPath())
			fmt.Fprintf(out, "stop it with: upshift cluster down --name %s\n", c.Name)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Name, "name", localcluster.DefaultName, "cluster name (clusters with distinct names run side by side)")
	f.IntVar(&o.Nodes, "nodes", 3, "number of fake nodes")
	f.IntVar(&o.APIServerPort, "port", 0, "API server port on 127.0.0.1 (0 picks a free one)")
	f.DurationVar(&o.PodReadyDelay, "pod-ready-delay", 200*time.Millisecond, "how long a pod takes to become Running and Ready")
	addBinFlags(cmd, &o.BinDir, &o.NoBuild)
	return cmd
}

func newClusterDownCommand() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop a local cluster and remove its data",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return localcluster.Down(name, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&name, "name", localcluster.DefaultName, "cluster name")
	return cmd
}

func newClusterStatusCommand() *cobra.Command {
	var name, output string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show local clusters: API server, processes up, nodes, age",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var states []*localcluster.State
			if cmd.Flags().Changed("name") {
				st, err := localcluster.Get(name)
				if err != nil {
					return err
				}
				states = []*localcluster.State{st}
			} else {
				list, err := localcluster.List()
				if err != nil {
					return err
				}
				states = list
			}
			return printClusterStates(cmd, states, output)
		},
	}
	cmd.Flags().StringVar(&name, "name", localcluster.DefaultName, "show only this cluster")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml")
	return cmd
}

func printClusterStates(cmd *cobra.Command, states []*localcluster.State, output string) error {
	out := cmd.OutOrStdout()
	switch output {
	case "json":
		b, err := json.MarshalIndent(states, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(out, string(b))
		return nil
	case "yaml":
		b, err := yaml.Marshal(states)
		if err != nil {
			return err
		}
		fmt.Fprint(out, string(b))
		return nil
	case "":
	default:
		return fmt.Errorf("invalid --output %q: use json or yaml", output)
	}
	if len(states) == 0 {
		fmt.Fprintln(out, "no local clusters; start one with `upshift cluster up`")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tSERVER\tNODES\tAGE\tKUBECONFIG")
	for _, st := range states {
		up := len(st.Running())
		status := "Running"
		switch {
		case up == 0:
			status = "Stopped (stale: the next `up` cleans it)"
		case up < len(st.Processes):
			status = fmt.Sprintf("Degraded (%d/%d processes)", up, len(st.Processes))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", st.Name, status, st.Server, st.Nodes, time.Since(st.Started).Round(time.Second), st.Kubeconfig)
	}
	return tw.Flush()
}

func newClusterBuildCommand() *cobra.Command {
	var dir string
	var force bool
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build (or check) the local control plane binaries without starting a cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bins, err := localcluster.EnsureBinaries(cmd.Context(), localcluster.EnsureOptions{Dir: dir, Progress: cmd.ErrOrStderr(), Force: force})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "binaries ready in %s\n", bins.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "bin-dir", "", "binary directory (default: the user cache directory, or $"+localcluster.EnvBinDir+")")
	cmd.Flags().BoolVar(&force, "force", false, "rebuild every binary")
	return cmd
}

func addBinFlags(cmd *cobra.Command, dir *string, noBuild *bool) {
	cmd.Flags().StringVar(dir, "bin-dir", "", "binary directory (default: the user cache directory, or $"+localcluster.EnvBinDir+")")
	cmd.Flags().BoolVar(noBuild, "no-build", false, "fail instead of building missing binaries")
}
