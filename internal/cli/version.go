package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/version"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of upshift and of the local control plane it builds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "upshift %s", version.Version)
			if c := version.Commit(); c != "" {
				fmt.Fprintf(out, " (%s)", c)
			}
			fmt.Fprintf(out, " %s/%s %s\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
			fmt.Fprintf(out, "local cluster: kubernetes %s, etcd %s, kwok %s, helm %s\n",
				localcluster.KubernetesVersion, localcluster.EtcdVersion, localcluster.KwokVersion, localcluster.HelmVersion)
			return nil
		},
	}
}
