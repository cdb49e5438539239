package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newApproveCommand(kf *kubeFlags) *cobra.Command {
	var stepName string
	cmd := &cobra.Command{
		Use:   "approve NAME [--step STEP]",
		Short: "Approve the approval step a run waits at",
		Long: `Record your approval of the approval step the run waits at (or of --step).
A waiting apply goes on at once; a run stopped with --no-wait goes on at the
next apply. Exit 1 when no approval step waits.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := openSession(kf)
			if err != nil {
				return err
			}
			step, err := sess.Approve(cmd.Context(), args[0], stepName)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "approved step %s of run %s\n", step, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&stepName, "step", "", "the approval step to approve (default: the one the run waits at)")
	return cmd
}

// stdoutIsTerminal decides defaults that differ for people and scripts.
func stdoutIsTerminal() bool { return term.IsTerminal(int(os.Stdout.Fd())) }
