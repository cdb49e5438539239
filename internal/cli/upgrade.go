package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/report"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/upgrade"
)

func newUpgradeCommand(kf *kubeFlags) *cobra.Command {
	var cf catalogFlags
	var rf runFlags
	var retry bool
	var reportFile string
	cmd := &cobra.Command{
		Use:   "upgrade --to VERSION --catalog CATALOG",
		Short: "Take the platform to a version of its release catalog, hop by hop",
		Long: `Take the platform to a version of its release catalog: detect the version
the cluster runs (the catalog's spec.detect, or --from), find the path
(never skipping a minor unless a release allows it, each minor's latest
patch, required stops kept, the cluster's Kubernetes version and its peers'
versions within every release's ranges, the compatibility matrix), and run
each hop's plan as its own run: backed up, gated, rolled back on failure,
resumable. A hop whose release installs a new Kubernetes minor
(installsKubernetes) is first refused if the cluster holds objects in API
versions that minor no longer serves (last-applied annotations, Helm
releases). A failed hop rolls back that hop only and stops; the hops
before it stay done. After each hop the version sources must say the hop's
version. Run the same command again to go on after an approval, a Ctrl-C or
a crash: an unfinished hop is resumed first, from the plan saved with its
run. ` + "`upshift plan --to`" + ` previews the hops. See docs/catalog.md.

Exit codes as apply's, for the hop that stopped: 0 the target reached;
1 invalid input or refused, nothing changed; 2 a hop failed and was rolled
back; 3 a hop failed and was not rolled back, or the version sources do
not say the version a hop reached; 4 stopped (waiting, interrupted,
aborted; run it again to go on).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUpgrade(cmd, kf, &cf, &rf, retry, reportFile)
		},
	}
	cf.add(cmd)
	rf.add(cmd)
	cmd.Flags().BoolVar(&retry, "retry", false, "start a rolled-back hop again from its first stage, with fresh backups, or resume an aborted one")
	cmd.Flags().StringVar(&reportFile, "report", "", "write the report of the hops run (upshift report's Markdown; JSON when FILE ends in .json) to FILE")
	return cmd
}

// runUpgrade drives the hops to --to and reports where they stopped.
func runUpgrade(cmd *cobra.Command, kf *kubeFlags, cf *catalogFlags, rf *runFlags, retry bool, reportFile string) error {
	if err := cf.validate(); err != nil {
		return err
	}
	if err := rf.validate(); err != nil {
		return err
	}
	cfg, err := kf.restConfig()
	if err != nil {
		return err
	}
	cs, err := clients.New(cfg)
	if err != nil {
		return err
	}
	cat, err := cf.openCatalog(cmd.Context(), kf, cs)
	if err != nil {
		return err
	}
	sess, view, err := rf.open(cmd, kf)
	if err != nil {
		return err
	}
	defer view.stop()
	hops := &upgrade.Hops{
		Session: sess, Clients: cs, Catalog: cat, Request: cf.request(), Retry: retry,
		Resolve: func(_ context.Context, name string, l *plan.Loaded) (*resolve.Plan, error) {
			return resolveLoaded(cmd, name, l, kf)
		},
		Notice: func(msg string) { view.notice(redact.Text(msg)) },
		Solved: func(s *upgrade.Solution) {
			for _, l := range s.Describe() {
				view.notice(redact.Text(l))
			}
		},
	}
	res, err := hops.Run(cmd.Context())
	view.stop()
	out := &upgradeOutput{cmd: cmd, output: rf.output, reportFile: reportFile, target: cf.to}
	if err != nil {
		_ = out.report(res, nil)
		return cf.explain(cat, err)
	}
	return out.finish(res, cf.againCommand())
}

// upgradeOutput prints where `upgrade` left the hops it drove.
type upgradeOutput struct {
	cmd        *cobra.Command
	output     string
	reportFile string
	target     string
}

// finish reports the hops and returns the error carrying the exit code
// of the hop that stopped, with its run's hint.
func (o *upgradeOutput) finish(res *upgrade.Result, again string) error {
	last := res.Stopped
	if last != nil {
		switch last.Decision.Verdict {
		case engine.AlreadyDone, engine.ReportFailed:
			fmt.Fprintln(o.cmd.ErrOrStderr(), redact.Text(last.Decision.Reason+decisionHint(last.Decision)))
		}
	}
	if err := o.report(res, last); err != nil {
		return err
	}
	if last == nil {
		if res.Solution != nil && len(res.Solution.Path) == 0 && len(res.Hops) == 0 {
			fmt.Fprintf(o.cmd.OutOrStdout(), "the cluster runs %s already: nothing to do\n", res.Solution.From)
		}
		return nil
	}
	code := runExitCode(last, false)
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code, err: errors.New(whatNext(last, code, again))}
}

// report prints the hops driven and those of the path not run: a table,
// with the last run's detail when it stopped; with -o, the hops as data.
// --report gets the report.
func (o *upgradeOutput) report(res *upgrade.Result, last *runner.Result) error {
	w := o.cmd.OutOrStdout()
	hops, notRun := res.Hops, res.NotRun()
	if o.output != "" {
		shown := make([]upgrade.Hop, len(hops))
		for i, h := range hops {
			shown[i] = h
			shown[i].Run = redact.Run(h.Run)
		}
		if err := printObject(w, struct {
			Target string        `json:"target"`
			Hops   []upgrade.Hop `json:"hops"`
			NotRun []upgrade.Hop `json:"notRun,omitempty"`
		}{o.target, shown, notRun}, o.output); err != nil {
			return err
		}
	} else {
		if last != nil && last.Run != nil {
			printRunSummary(w, last.Run)
		}
		printHops(w, hops, notRun)
		if len(hops) > 0 {
			names := make([]string, len(hops))
			for i, h := range hops {
				names[i] = h.Run.Name
			}
			fmt.Fprintf(w, "report: upshift report %s\n", strings.Join(names, " "))
		}
	}
	return o.writeReport(res)
}

// printHops is a table of the hops driven, then of those not run.
func printHops(w io.Writer, done, notRun []upgrade.Hop) {
	if len(done) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOP\tRUN\tPHASE\tTOOK")
	for _, h := range slices.Concat(done, notRun) {
		hop := "install " + h.To
		switch {
		case h.Resumed:
			hop = "… → " + h.To + " (resumed)"
		case h.From != "":
			hop = h.From + " → " + h.To
		}
		name, phase, d := "", report.NotRunOutcome, ""
		if h.Run != nil {
			name, phase, d = h.Run.Name, string(h.Run.Status.Phase), took(h.Run.Status.StartedAt, h.Run.Status.FinishedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", hop, name, phase, d)
	}
	tw.Flush()
}
