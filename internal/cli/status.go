package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
)

func newStatusCommand(kf *kubeFlags) *cobra.Command {
	var output string
	var ref runRef
	cmd := &cobra.Command{
		Use:   "status [NAME [-n NAMESPACE]]",
		Short: "Show a run (default: the latest) with its stages, steps, gates and backups",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return fmt.Errorf("--output %q: use json or yaml", output)
			}
			sess, err := openSession(kf)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var run *v1alpha1.UpgradeRun
			if len(args) == 1 {
				name, err := ref.resolve(ctx, sess, args[0])
				if err != nil {
					return err
				}
				run, err = sess.Store().Get(ctx, name)
				if errors.Is(err, runstore.ErrNotFound) {
					return fmt.Errorf("no run named %q on this cluster (upshift history lists them)", name)
				}
			} else {
				run, err = latest(cmd, sess)
			}
			if err != nil {
				return err
			}
			if output != "" {
				return printObject(cmd.OutOrStdout(), redact.Run(run), output)
			}
			printRunSummary(cmd.OutOrStdout(), run)
			id, valid, err := lease.Holder(ctx, sess.Clientset(), sess.Store().Namespace(), "upshift")
			switch {
			case err != nil:
				// The run is shown; only who drives it is unknown.
				fmt.Fprintf(cmd.ErrOrStderr(), "cannot tell whether a process drives run %s: %v\n", run.Name, err)
			case valid && id.Run == run.Name:
				fmt.Fprintf(cmd.OutOrStdout(), "driven now by %s\n", id)
				if s := waitingApproval(run); s != "" {
					if _, ok := engine.Approved(run, s); !ok {
						fmt.Fprintf(cmd.OutOrStdout(), "next: `upshift approve %s` approves step %s\n", run.Name, s)
					}
				}
			default:
				if h := runHint(run); h != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "next: %s\n", h)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml")
	ref.add(cmd)
	return cmd
}

func latest(cmd *cobra.Command, sess *runner.Session) (*v1alpha1.UpgradeRun, error) {
	runs, err := sess.Store().List(cmd.Context())
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, errors.New("no run on this cluster yet: start one with upshift apply -f PLAN")
	}
	return &runs[len(runs)-1], nil
}

func newHistoryCommand(kf *kubeFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List the runs kept on the cluster, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return fmt.Errorf("--output %q: use json or yaml", output)
			}
			sess, err := openSession(kf)
			if err != nil {
				return err
			}
			runs, err := sess.Store().List(cmd.Context())
			if err != nil {
				return err
			}
			if output != "" {
				return printObject(cmd.OutOrStdout(), redact.Runs(runs), output)
			}
			if len(runs) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no runs on this cluster")
				return nil
			}
			printRunList(cmd.OutOrStdout(), runs)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml")
	return cmd
}

func openSession(kf *kubeFlags) (*runner.Session, error) {
	cfg, err := kf.restConfig()
	if err != nil {
		return nil, err
	}
	return runner.Open(cfg, kf.sessionOptions())
}
