package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/source"
)

// runFlags are shared by the commands that drive a run.
type runFlags struct {
	output        string
	wait, noWait  bool
	leaseDuration time.Duration
	leaseRenew    time.Duration
	keepRuns      int
}

func (f *runFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "print the final run as json or yaml")
	cmd.Flags().DurationVar(&f.leaseDuration, "lease-duration", 10*time.Second, "how long the run's lease lasts without renewal")
	cmd.Flags().DurationVar(&f.leaseRenew, "lease-renew", 2*time.Second, "how often the lease is renewed")
	cmd.Flags().IntVar(&f.keepRuns, "keep-runs", 10, "finished runs (and their backups) kept per cluster")
	cmd.Flags().BoolVar(&f.wait, "wait", stdoutIsTerminal(), "at an approval or a pause, keep waiting (default in a terminal)")
	cmd.Flags().BoolVar(&f.noWait, "no-wait", false, "at an approval or a pause, save the run and exit 4 (default when not in a terminal; wins over --wait)")
}

func (f *runFlags) validate() error {
	if f.output != "" && f.output != "json" && f.output != "yaml" {
		return fmt.Errorf("--output %q: use json or yaml", f.output)
	}
	if f.keepRuns < 1 {
		return fmt.Errorf("--keep-runs %d: keep at least 1", f.keepRuns)
	}
	return nil
}

func newApplyCommand(kf *kubeFlags) *cobra.Command {
	var file string
	var retry bool
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "apply -f FILE [--retry]",
		Short: "Run an UpgradePlan, or resume its unfinished run",
		Long: `Run an UpgradePlan on the cluster, stage by stage: each stage is backed up
before it changes anything and gated after; a failed stage rolls back
(autoRollback, default true). Progress is saved in the cluster after every
transition: apply the same plan again to resume after a crash or Ctrl-C.

Exit codes: 0 target reached; 1 invalid input or refused, nothing changed;
2 failed and rolled back, restore verified; 3 failed and not rolled back,
or the rollback failed (the message says what to run); 4 stopped (interrupted
or aborted; apply resumes).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("-f FILE is required: the UpgradePlan to run")
			}
			if err := rf.validate(); err != nil {
				return err
			}
			p, err := loadAndResolve(cmd, file, kf)
			if err != nil {
				return err
			}
			sess, view, err := rf.open(cmd, kf)
			if err != nil {
				return err
			}
			defer view.stop()
			for _, n := range controllerOnly(p.Plan.Spec, "apply") {
				view.notice(n)
			}
			// The first stage's snapshot is read while preflight runs.
			sess.ReadAhead(cmd.Context(), p)
			if errs := sess.Preflight(cmd.Context(), p); len(errs) > 0 {
				view.stop()
				return preflightProblems(file, errs)
			}
			out, err := sess.Apply(cmd.Context(), p, retry)
			view.stop()
			if err != nil {
				if refusal(err) {
					if out != nil {
						return withDecisionHint(err, out.Decision)
					}
					return err
				}
				return fmt.Errorf("apply %s: %w", p.Plan.Name, err)
			}
			return finishRun(cmd, out, rf.output, false)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "UpgradePlan file")
	cmd.Flags().BoolVar(&retry, "retry", false, "start a rolled-back plan again from its first stage, with fresh backups")
	rf.add(cmd)
	return cmd
}

// open connects a session whose transitions show in a progress view.
func (f *runFlags) open(cmd *cobra.Command, kf *kubeFlags) (*runner.Session, *progress, error) {
	cfg, err := kf.restConfig()
	if err != nil {
		return nil, nil, err
	}
	view := newProgress(cmd.OutOrStdout(), cmd.ErrOrStderr(), f.output == "")
	opts := f.options(view)
	opts.Namespace = kf.runsNamespace
	sess, err := runner.Open(cfg, opts)
	if err != nil {
		view.stop()
		return nil, nil, err
	}
	return sess, view, nil
}

func (f *runFlags) options(view *progress) runner.Options {
	return runner.Options{
		LeaseDuration: f.leaseDuration,
		LeaseRenew:    f.leaseRenew,
		KeepRuns:      f.keepRuns,
		Observe:       view.observe,
		Notice:        view.notice,
		NoWait:        f.noWait || !f.wait,
	}
}

// loadAndResolve reads, validates and resolves a plan; any problem is
// reported with its field path before anything changes in a cluster. A
// plan with configMap, secret or valuesFrom sources reads them with the
// kubeconfig's credentials, from the plan's namespace ("default" when the
// file sets none); a plan without them needs no cluster here.
func loadAndResolve(cmd *cobra.Command, file string, kf *kubeFlags) (*resolve.Plan, error) {
	l, err := plan.Load(file)
	if err != nil {
		return nil, err
	}
	if errs := plan.Validate(l); len(errs) > 0 {
		return nil, problems(file, errs)
	}
	return resolveLoaded(cmd, file, l, kf)
}

// resolveLoaded reads the sources of a validated plan; file names it in
// errors.
func resolveLoaded(cmd *cobra.Command, file string, l *plan.Loaded, kf *kubeFlags) (*resolve.Plan, error) {
	var objs source.Objects
	if fields := resolve.ObjectSources(l.Plan); len(fields) > 0 {
		cfg, err := kf.restConfig()
		if err == nil {
			objs, err = resolve.NewObjects(cfg)
		}
		if err != nil {
			more := ""
			if len(fields) > 1 {
				more = fmt.Sprintf(" (and %d more)", len(fields)-1)
			}
			return nil, fmt.Errorf("%s: %s%s is read from a ConfigMap or Secret in the cluster (namespace %s): %w; nothing was changed",
				file, fields[0], more, resolve.SourceEnv(l, nil).Namespace, err)
		}
	}
	l.AllowHTTP = kf.allowHTTP
	p, err := resolve.Read(cmd.Context(), l, objs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; nothing was changed", file, err)
	}
	return p, nil
}
