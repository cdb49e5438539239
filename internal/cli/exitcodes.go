package cli

import (
	"errors"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/runner"
)

// Exit codes of the run commands (docs/plans.md, Commands, documents them).
const (
	ExitRolledBack = 2 // failed and rolled back, restore verified
	ExitOperator   = 3 // failed and not rolled back, or the rollback failed
	ExitWaiting    = 4 // stopped and waiting: interrupted, aborted
)

// runExitCode maps where a command left a run to the exit code. forRollback
// is set for `upshift rollback`, whose goal is the restore.
func runExitCode(out *runner.Result, forRollback bool) int {
	if out.Stopped != nil {
		for _, resumable := range []error{runner.ErrInterrupted, runner.ErrAborted, runner.ErrLeaseLost, runner.ErrAPIUnavailable, runner.ErrWaiting} {
			if errors.Is(out.Stopped, resumable) {
				return ExitWaiting
			}
		}
		return ExitOperator // e.g. progress that could not be saved
	}
	if out.Run == nil {
		return ExitInvalid
	}
	switch out.Run.Status.Phase {
	case v1alpha1.RunSucceeded:
		return ExitOK
	case v1alpha1.RunRolledBack:
		if forRollback {
			return ExitOK
		}
		return ExitRolledBack
	case v1alpha1.RunAborted:
		return ExitWaiting
	}
	return ExitOperator
}

// refusal reports whether err is a refusal (exit 1, nothing changed).
func refusal(err error) bool { return errors.Is(err, runner.ErrRefused) }
