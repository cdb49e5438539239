package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/upshift-dev/upshift/internal/demo"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

func newDemoCommand() *cobra.Command {
	o := localcluster.Options{Name: "demo", Detached: true}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start a local cluster (or reuse it) and run the sample upgrade on it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Progress = cmd.ErrOrStderr()
			out := cmd.OutOrStdout()
			kubeconfig, err := demoCluster(cmd, o)
			if err != nil {
				return err
			}
			cfg, err := restConfigFrom(kubeconfig)
			if err != nil {
				return err
			}
			if err := demo.RunSample(cmd.Context(), cfg, out); err != nil {
				return err
			}
			fmt.Fprintf(out, "\nthe cluster stays up: export KUBECONFIG=%s\nstop it with: upshift cluster down --name %s\n", kubeconfig, o.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Name, "name", o.Name, "name of the local cluster to use or start")
	addBinFlags(cmd, &o.BinDir, &o.NoBuild)
	return cmd
}

// demoCluster reuses a running cluster of that name or starts one.
func demoCluster(cmd *cobra.Command, o localcluster.Options) (string, error) {
	st, err := localcluster.Get(o.Name)
	if err == nil && len(st.Running()) == len(st.Processes) {
		fmt.Fprintf(cmd.OutOrStdout(), "using the running cluster %q at %s\n", st.Name, st.Server)
		return st.Kubeconfig, nil
	}
	if err != nil && !errors.Is(err, localcluster.ErrNotFound) {
		return "", err
	}
	if err == nil { // degraded: start afresh
		if derr := localcluster.Down(o.Name, cmd.ErrOrStderr()); derr != nil {
			return "", derr
		}
	}
	c, err := localcluster.Start(cmd.Context(), o)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "cluster %q is up at %s\n", c.Name, c.Server)
	return c.KubeconfigPath(), nil
}
