package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// newRunCommand builds rollback, retry and abort: each takes a run name,
// acts on the saved run and prints where it ends.
func newRunCommand(kf *kubeFlags, use, short, long string, act func(*runner.Session, *cobra.Command, string) (*runner.Result, error), forRollback bool) *cobra.Command {
	var rf runFlags
	var ref runRef
	cmd := &cobra.Command{
		Use:   use + " NAME [-n NAMESPACE]",
		Short: short,
		Long:  long,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.validate(); err != nil {
				return err
			}
			sess, view, err := rf.open(cmd, kf)
			if err != nil {
				return err
			}
			defer view.stop()
			name, err := ref.resolve(cmd.Context(), sess, args[0])
			if err != nil {
				return err
			}
			out, err := act(sess, cmd, name)
			view.stop()
			if errors.Is(err, runstore.ErrNotFound) {
				return fmt.Errorf("no run named %q on this cluster (upshift history lists them)", name)
			}
			if err != nil {
				return err
			}
			return finishRun(cmd, out, rf.output, forRollback)
		},
	}
	rf.add(cmd)
	ref.add(cmd)
	return cmd
}

func newRollbackCommand(kf *kubeFlags) *cobra.Command {
	return newRunCommand(kf, "rollback", "Undo every stage of a run that changed something, last first, and verify the restore",
		`Restore every stage that changed something from its backup, last stage first,
then verify that each restored object equals its snapshot and that workloads
are Ready again. Objects the stage created are deleted, except CRDs (deleting
a CRD deletes its data): those are reported.

Exit codes: 0 restored and verified; 1 refused; 3 the rollback failed (a
backup is corrupt or an object differs from its snapshot); 4 interrupted.`,
		func(s *runner.Session, cmd *cobra.Command, name string) (*runner.Result, error) {
			return s.Rollback(cmd.Context(), name)
		}, true)
}

func newRetryCommand(kf *kubeFlags) *cobra.Command {
	return newRunCommand(kf, "retry", "Retry the failed step of a run that failed without rollback, and go on",
		`Retry the failed step (or gate) of a run that failed and was not rolled back
(autoRollback: false), then go on with the rest of the plan. Steps that
succeeded are not run again. The plan's sources come from the copy saved
with the run, so no file is needed.`,
		func(s *runner.Session, cmd *cobra.Command, name string) (*runner.Result, error) {
			return s.Retry(cmd.Context(), name)
		}, false)
}

func newAbortCommand(kf *kubeFlags) *cobra.Command {
	return newRunCommand(kf, "abort", "Stop a running run where it is; backups are kept and a rollback stays possible",
		`Stop a run where it is. When another process drives it, that process is
asked to stop and this command waits until it has. The lease is released,
backups are kept; resume with apply or undo with rollback. Exit 4 once stopped.`,
		func(s *runner.Session, cmd *cobra.Command, name string) (*runner.Result, error) {
			return s.Abort(cmd.Context(), name)
		}, false)
}
