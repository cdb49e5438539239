package cli

import (
	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/config/crd"
)

func newCRDsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "crds",
		Short: "Print the CRDs upshift uses (UpgradePlan, UpgradeRun) as YAML, for kubectl apply",
		Long: `Print every CRD this upshift embeds, as generated from its API, as one YAML
stream. apply installs the UpgradeRun CRD itself before a run's first write
when it is missing or of another version; a user who may not install CRDs
needs a cluster admin to run:

  upshift crds | kubectl apply -f -

Each CRD carries the annotation upshift.dev/crd-digest, by which upshift
knows it as its own.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := crd.YAML()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
}
