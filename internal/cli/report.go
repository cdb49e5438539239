package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/report"
	"github.com/upshift-dev/upshift/internal/runstore"
)

func newReportCommand(kf *kubeFlags) *cobra.Command {
	var output string
	var ref runRef
	cmd := &cobra.Command{
		Use:   "report NAME [NAME...] [-n NAMESPACE]",
		Short: "Report what a run did, or the runs of a multi-hop upgrade in order: Markdown, JSON or YAML",
		Long: `Report what a run did, from its record (the UpgradeRun saved after every
transition, by the CLI and the controller alike): the version it started from
and the one it goes to, each stage and step with its outcome, start time and
duration, the gate results by severity (blocking, warning, info), the
warnings, what was rolled back and whether the restore was verified, and what
to do next.

Several names are the runs of one multi-hop upgrade, in the order their hops
ran: the report covers the whole (from the first hop's version to the last
hop's, and where it stands), then each hop.

Markdown by default, to keep with the change (upshift report NAME >
report.md); -o json or -o yaml for machines. Messages are redacted as in
every output.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "markdown" && output != "json" && output != "yaml" {
				return fmt.Errorf("--output %q: use markdown, json or yaml", output)
			}
			seen := map[string]bool{}
			for _, name := range args {
				if seen[name] {
					return fmt.Errorf("run %q is named twice: name each hop's run once, in the order the hops ran", name)
				}
				seen[name] = true
			}
			sess, err := openSession(kf)
			if err != nil {
				return err
			}
			var runs []*v1alpha1.UpgradeRun
			for _, name := range args {
				if name, err = ref.resolve(cmd.Context(), sess, name); err != nil {
					return err
				}
				run, err := sess.Store().Get(cmd.Context(), name)
				if errors.Is(err, runstore.ErrNotFound) {
					return fmt.Errorf("no run named %q in namespace %s (upshift history lists them)", name, sess.Store().Namespace())
				}
				if err != nil {
					return err
				}
				runs = append(runs, run)
			}
			w := cmd.OutOrStdout()
			if len(runs) == 1 {
				rep := report.Build(runs[0])
				if output != "markdown" {
					return printObject(w, rep, output)
				}
				// Built from the redacted run; redacted once more, as
				// every text on its way out.
				_, err = fmt.Fprint(w, redact.Text(report.Markdown(rep, reportCommand)))
				return err
			}
			// The runs' records keep their own hop alone (spec.plan's
			// version, spec.fromVersion): not the target the upgrade was
			// asked for nor the path solved for it, which only the
			// driver knew. So the report goes as far as the runs named
			// and says its target is the last hop's; upgrade --report
			// and the end of upgrade show the hops not run.
			up := report.BuildUpgrade(runs...)
			if output != "markdown" {
				return printObject(w, up, output)
			}
			_, err = fmt.Fprint(w, redact.Text(report.UpgradeMarkdown(up, reportCommand)))
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "markdown", "markdown, json or yaml")
	return cmd
}
