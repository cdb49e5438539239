package cli

import (
	"errors"
	"fmt"

	"github.com/upshift-dev/upshift/internal/upgrade"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
)

// hopPreview is one hop of `plan --to`: its plan and what it would change.
type hopPreview struct {
	From    string              `json:"from,omitempty"`
	To      string              `json:"to"`
	Plan    string              `json:"plan"`
	Preview *runner.PlanPreview `json:"preview,omitempty"`
	// Note says why a hop has no preview.
	Note string `json:"note,omitempty"`
	// Scan says what the removed-API scan of a hop that brings a
	// Kubernetes minor found (nothing: a finding stops the command).
	Scan string `json:"scan,omitempty"`
}

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
	hops := make([]hopPreview, len(h.Path))
	for i := range h.Path {
		l, err := h.Plan(ctx, i)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("release %s's plan %s", h.Path[i].Version, l.Plan.Name)
		p, err := resolveLoaded(cmd, name, l, kf)
		if err != nil {
			return err
		}
		hp := hopPreview{From: upgrade.VersionString(h.HopFrom(i)), To: h.Path[i].Version.String(), Plan: l.Plan.Name}
		switch {
		case sess == nil:
			hp.Note = "no cluster configured (--kubeconfig or KUBECONFIG): checked the files only"
		case i == 0:
			// The first hop runs on the cluster as it is: check it as apply will.
			if errs := sess.Preflight(ctx, p); len(errs) > 0 {
				return preflightProblems(name, errs)
			}
			// A hop that brings a Kubernetes minor is scanned for objects
			// in API versions it removes, as upgrade will.
			if hp.Scan, err = upgrade.ScanRemovedAPIs(ctx, cs, h, i, name); err != nil {
				return cf.explain(cat, err)
			}
			fallthrough
		default:
			if hp.Preview, err = sess.Preview(ctx, p); err != nil {
				hp.Note = fmt.Sprintf("no preview before hop %d has run: %v", i, err)
			}
		}
		if output == "" {
			if i == 0 {
				for _, line := range h.Describe() {
					fmt.Fprintln(out, redact.Text(line))
				}
			}
			fmt.Fprintf(out, "\nhop %d/%d: %s\n", i+1, len(h.Path), h.HopName(i))
			if hp.Scan != "" {
				fmt.Fprintln(out, redact.Text(hp.Scan))
			}
			printPlan(out, p.Plan, hp.Preview)
			if hp.Note != "" {
				fmt.Fprintln(out, redact.Text(hp.Note))
			}
		}
		hops[i] = hp
	}
	if output != "" {
		return printObject(out, struct {
			Catalog string       `json:"catalog"`
			From    string       `json:"from,omitempty"`
			To      string       `json:"to"`
			Hops    []hopPreview `json:"hops"`
		}{redact.Text(cat.Where), upgrade.VersionString(h.From), h.To.String(), hops}, output)
	}
	if len(h.Path) == 0 {
		fmt.Fprintf(out, "the cluster runs %s already: nothing to do\n", h.From)
		return nil
	}
	fmt.Fprintln(out, "nothing was changed")
	return nil
}
