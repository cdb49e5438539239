package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newApproveCommand(kf *kubeFlags) *cobra.Command {
	var stepName string
	var ref runRef
	cmd := &cobra.Command{
		Use:   "approve NAME [--step STEP] [-n NAMESPACE]",
		Short: "Approve the approval step a run waits at",
		Long: `Record your approval of the approval step the run waits at now. A waiting
apply goes on at once; a run stopped with --no-wait goes on at the next apply.

Without --step only the step the run waits at is approved, never one further
on. --step S approves S by name: the step the run waits at, or one it has not
reached yet (approved ahead: the run will not stop there).

Exit 1, changing nothing, when no approval step waits (and no --step is
given), or the step already passed or is already approved.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := openSession(kf)
			if err != nil {
				return err
			}
			name, err := ref.resolve(cmd.Context(), sess, args[0])
			if err != nil {
				return err
			}
			a, err := sess.Approve(cmd.Context(), name, stepName)
			if err != nil {
				return withApprovalHint(err, name)
			}
			if a.Ahead {
				fmt.Fprintf(cmd.OutOrStdout(), "pre-approved step %s of run %s; the run will not stop there\n", a.Step, name)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "approved step %s of run %s\n", a.Step, name)
			return nil
		},
	}
	ref.add(cmd)
	cmd.Flags().StringVar(&stepName, "step", "", "the approval step to approve: the one the run waits at, or one ahead (default: the one the run waits at)")
	return cmd
}

// stdoutIsTerminal decides defaults that differ for people and scripts.
func stdoutIsTerminal() bool { return term.IsTerminal(int(os.Stdout.Fd())) }
