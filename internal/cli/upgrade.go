package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/upshift-dev/upshift/internal/report"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
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
patch, required stops kept, the cluster's Kubernetes version within every
release's range), and run each hop's plan as its own run: backed up, gated,
rolled back on failure, resumable. A failed hop rolls back that hop only
and stops; the hops before it stay done. After each hop the version sources
must say the hop's version. Run the same command again to go on after an
approval, a Ctrl-C or a crash: an unfinished hop is resumed first, from the
plan saved with its run. ` + "`upshift plan --to`" + ` previews the hops.

Exit codes as apply's, for the hop that stopped: 0 the target reached;
1 invalid input or refused, nothing changed; 2 a hop failed and was rolled
back; 3 a hop failed and was not rolled back, or the version sources do
not say the version a hop reached; 4 stopped (waiting, interrupted,
aborted; run it again to go on).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			u := &upgrader{cmd: cmd, kf: kf, cf: &cf, rf: &rf, sess: sess, view: view, cs: cs, cat: cat, retry: retry, reportFile: reportFile}
			return u.run(cmd.Context())
		},
	}
	cf.add(cmd)
	rf.add(cmd)
	cmd.Flags().BoolVar(&retry, "retry", false, "start a rolled-back hop again from its first stage, with fresh backups")
	cmd.Flags().StringVar(&reportFile, "report", "", "write the report of the hops run (upshift report's Markdown; JSON when FILE ends in .json) to FILE")
	return cmd
}

// upgrader runs an upgrade's hops one after the other.
type upgrader struct {
	cmd   *cobra.Command
	kf    *kubeFlags
	cf    *catalogFlags
	rf    *runFlags
	sess  *runner.Session
	view  *progress
	cs    *clients.Set
	cat   *catalog.Catalog
	retry bool
	// reportFile receives the hops' report, when set.
	reportFile string
	// done are the hops run by this command, in order.
	done []hopResult
}

// hopResult is a hop this command drove, and where it left it.
type hopResult struct {
	From string `json:"from,omitempty"`
	To   string `json:"to"`
	// Resumed: an earlier command started it (its start is not known
	// here).
	Resumed bool                 `json:"resumed,omitempty"`
	Run     *v1alpha1.UpgradeRun `json:"run"`
}

func (u *upgrader) run(ctx context.Context) error {
	if out, stop, err := u.resumeUnfinished(ctx); stop || err != nil {
		if err != nil {
			return err
		}
		return u.stopped(out)
	}
	h, err := u.cf.solve(ctx, u.cat, u.cs)
	if err != nil {
		return err
	}
	for _, l := range h.describe() {
		u.view.notice(redact.Text(l))
	}
	for i := range h.path {
		to := h.path[i].Version
		u.view.notice(fmt.Sprintf("hop %d/%d: %s", i+1, len(h.path), h.hopName(i)))
		out, err := u.hop(ctx, h, i)
		if err != nil {
			return err
		}
		if out.Run == nil || out.Run.Status.Phase != v1alpha1.RunSucceeded || out.Stopped != nil {
			return u.stopped(out)
		}
		if err := u.verify(ctx, to, out.Run.Name); err != nil {
			return err
		}
	}
	u.view.stop()
	if len(h.path) == 0 && len(u.done) == 0 {
		fmt.Fprintf(u.cmd.OutOrStdout(), "the cluster runs %s already: nothing to do\n", h.from)
	}
	return u.report(nil)
}

// resumeUnfinished drives on a hop left unfinished by an earlier upgrade
// (or apply) of one of the catalog's releases, from the plan saved with
// its run: the catalog may render it differently now, and its version
// sources may be half-way. stop says the upgrade cannot go on past it.
func (u *upgrader) resumeUnfinished(ctx context.Context) (*runner.Outcome, bool, error) {
	runs, err := u.sess.Store().List(ctx)
	if err != nil {
		return nil, false, err
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].CreationTimestamp.Before(&runs[j].CreationTimestamp) })
	for _, r := range runs {
		v, err := semver.NewVersion(r.Spec.Plan.Version)
		if err != nil || r.Status.Phase.Finished() {
			continue
		}
		if _, ok := u.cat.Release(v); !ok {
			continue // not this platform's: the next hop's apply refuses, naming it
		}
		u.view.notice(fmt.Sprintf("run %s to %s is unfinished (%s): resuming it first", r.Name, v, r.Status.Phase))
		out, err := u.sess.Resume(ctx, r.Name)
		if err != nil {
			return nil, false, u.refused(out, err, r.Name)
		}
		u.done = append(u.done, hopResult{To: v.String(), Resumed: true, Run: out.Run})
		stop := out.Run == nil || out.Run.Status.Phase != v1alpha1.RunSucceeded || out.Stopped != nil
		if !stop && u.cf.from == "" {
			return out, false, u.verify(ctx, v, r.Name)
		}
		return out, stop, nil
	}
	return nil, false, nil
}

// hop runs hop i: its plan from the catalog, checked against the cluster
// as the hops before it left it.
func (u *upgrader) hop(ctx context.Context, h *hops, i int) (*runner.Outcome, error) {
	l, err := h.plan(ctx, i)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("release %s's plan %s", h.path[i].Version, l.Plan.Name)
	p, err := resolveLoaded(u.cmd, name, l, u.kf)
	if err != nil {
		return nil, err
	}
	if errs := u.sess.Preflight(ctx, p); len(errs) > 0 {
		u.view.stop()
		return nil, preflightProblems(name, errs)
	}
	out, err := u.sess.Apply(ctx, p, u.retry && i == 0)
	if err != nil {
		return nil, u.refused(out, err, p.Plan.Name)
	}
	if out.Decision.Verdict == engine.AlreadyDone {
		u.view.notice(redact.Text(out.Decision.Reason))
	}
	u.done = append(u.done, hopResult{From: versionOrEmpty(h.hopFrom(i)), To: h.path[i].Version.String(), Run: out.Run})
	return out, nil
}

func (u *upgrader) refused(out *runner.Outcome, err error, run string) error {
	u.view.stop()
	if refusal(err) {
		if out != nil {
			return withDecisionHint(err, out.Decision)
		}
		return err
	}
	return fmt.Errorf("upgrade: run %s: %w", run, err)
}

// verify checks that the catalog's version sources say the version a hop
// just reached: a plan that succeeds without moving them would make the
// next hop start from the wrong version.
func (u *upgrader) verify(ctx context.Context, v *semver.Version, run string) error {
	if u.cf.from != "" || len(u.cat.Spec.Detect) == 0 {
		return nil
	}
	findings, got, err := detect(ctx, u.cat, u.cs)
	if err == nil && got.Equal(v) {
		return nil
	}
	u.view.stop()
	u.report(nil)
	why := fmt.Sprintf("run %s reached %s, but the catalog's version sources do not say so (%s): check the release's plan and the catalog's spec.detect; the upgrade stops here", run, v, describeFindings(findings))
	return &exitError{code: ExitOperator, err: errors.New(redact.Text(why))}
}

// stopped reports a hop that did not succeed, with the exit code and the
// hint of its run; the hops before it stay done.
func (u *upgrader) stopped(out *runner.Outcome) error {
	u.view.stop()
	switch out.Decision.Verdict {
	case engine.AlreadyDone, engine.ReportFailed:
		fmt.Fprintln(u.cmd.ErrOrStderr(), redact.Text(out.Decision.Reason+decisionHint(out.Decision)))
	}
	code := runExitCode(out, false)
	if err := u.report(out); err != nil {
		return err
	}
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code, err: errors.New(whatNext(out, code, u.cf.againCommand()))}
}

// report prints the hops this command drove: a table, with the last
// run's detail when it stopped; with -o, the hops as data.
func (u *upgrader) report(last *runner.Outcome) error {
	w := u.cmd.OutOrStdout()
	if u.rf.output != "" {
		hops := make([]hopResult, len(u.done))
		for i, h := range u.done {
			hops[i] = h
			hops[i].Run = redact.Run(h.Run)
		}
		return printObject(w, struct {
			Target string      `json:"target"`
			Hops   []hopResult `json:"hops"`
		}{u.cf.to, hops}, u.rf.output)
	}
	if last != nil && last.Run != nil {
		printRunSummary(w, last.Run)
	}
	printHops(w, u.done)
	if len(u.done) > 0 {
		names := make([]string, len(u.done))
		for i, h := range u.done {
			names[i] = h.Run.Name
		}
		fmt.Fprintf(w, "report: upshift report %s\n", strings.Join(names, " "))
	}
	return u.writeReport()
}

// writeReport writes the hops' report to --report: Markdown, or JSON for
// a .json file.
func (u *upgrader) writeReport() error {
	if u.reportFile == "" || len(u.done) == 0 {
		return nil
	}
	runs := make([]*v1alpha1.UpgradeRun, len(u.done))
	for i, h := range u.done {
		runs[i] = h.Run
	}
	up := report.BuildUpgrade(runs...)
	var b []byte
	if strings.HasSuffix(u.reportFile, ".json") {
		var buf bytes.Buffer
		if err := printObject(&buf, up, "json"); err != nil {
			return err
		}
		b = buf.Bytes()
	} else {
		b = []byte(redact.Text(report.UpgradeMarkdown(up, reportCommand)))
	}
	if err := os.WriteFile(u.reportFile, b, 0o644); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}

func printHops(w io.Writer, done []hopResult) {
	if len(done) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOP\tRUN\tPHASE\tTOOK")
	for _, h := range done {
		hop := "install " + h.To
		switch {
		case h.Resumed:
			hop = "… → " + h.To + " (resumed)"
		case h.From != "":
			hop = h.From + " → " + h.To
		}
		name, phase, d := "", "", ""
		if h.Run != nil {
			name, phase, d = h.Run.Name, string(h.Run.Status.Phase), took(h.Run.Status.StartedAt, h.Run.Status.FinishedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", hop, name, phase, d)
	}
	tw.Flush()
}
