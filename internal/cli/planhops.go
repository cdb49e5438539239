package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/upgrade"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
)

// planHops prints the path to --to and each hop's plan with its preview;
// it changes nothing.
func planHops(cmd *cobra.Command, kf *kubeFlags, cf *catalogFlags, output string) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	var cs *clients.Set
	cfg, err := kf.restConfig()
	switch {
	case errors.Is(err, errNoCluster):
	case err != nil:
		return err
	default:
		if cs, err = clients.New(cfg); err != nil {
			return err
		}
	}
	cat, err := cf.openCatalog(ctx, kf, cs)
	if err != nil {
		return err
	}
	h, err := cf.solve(ctx, cat, cs)
	if err != nil {
		return err
	}
	var sess *runner.Session
	if cs != nil {
		if sess, err = runner.Open(cfg, kf.sessionOptions()); err != nil {
			return err
		}
	}
	hops, err := h.Previews(ctx, sess, cs, func(_ context.Context, name string, l *plan.Loaded) (*resolve.Plan, error) {
		return resolveLoaded(cmd, name, l, kf)
	})
	var pe *upgrade.PreflightError
	var removed *upgrade.RemovedAPIsError
	switch {
	case errors.As(err, &pe):
		return preflightProblems(pe.Name, pe.Errs)
	case errors.As(err, &removed):
		return cf.explain(cat, err)
	case err != nil:
		return err
	}
	if output == "" {
		for i, hp := range hops {
			if i == 0 {
				for _, line := range h.Describe() {
					fmt.Fprintln(out, redact.Text(line))
				}
			}
			fmt.Fprintf(out, "\nhop %d/%d: %s\n", i+1, len(h.Path), h.HopName(i))
			if hp.Scan != "" {
				fmt.Fprintln(out, redact.Text(hp.Scan))
			}
			printPlan(out, hp.Resolved.Plan, hp.Preview)
			if hp.Note != "" {
				fmt.Fprintln(out, redact.Text(hp.Note))
			}
		}
	}
	if output != "" {
		return printObject(out, struct {
			Catalog string               `json:"catalog"`
			From    string               `json:"from,omitempty"`
			To      string               `json:"to"`
			Hops    []upgrade.HopPreview `json:"hops"`
		}{redact.Text(cat.Where), upgrade.VersionString(h.From), h.To.String(), hops}, output)
	}
	if len(h.Path) == 0 {
		fmt.Fprintf(out, "the cluster runs %s already: nothing to do\n", h.From)
		return nil
	}
	fmt.Fprintln(out, "nothing was changed")
	return nil
}
