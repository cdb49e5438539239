// Package cli holds the cobra commands. They are thin: each parses flags,
// calls a package that does the work, and prints the result.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/upshift-dev/upshift/internal/redact"
)

// Exit codes shared by every command (see docs/plans.md, Commands).
const (
	ExitOK      = 0 // target reached
	ExitInvalid = 1 // invalid input, usage or refusal; nothing changed
)

// exitError carries an exit code to Execute.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// NewRootCommand builds the upshift command tree.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "upshift",
		Short:         "Upgrade Kubernetes platforms in stages: backed up, gated, resumable, reversible",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	kf := addKubeFlags(root)
	root.AddCommand(newVersionCommand(), newClusterCommand(), newDemoCommand(), newPlanCommand(kf),
		newApplyCommand(kf), newUpgradeCommand(kf), newStatusCommand(kf), newHistoryCommand(kf), newReportCommand(kf), newSupportBundleCommand(kf),
		newRollbackCommand(kf), newRetryCommand(kf), newAbortCommand(kf), newApproveCommand(kf), newBackupCommand(kf),
		newControllerCommand(kf), newServeCommand(kf), newAppCommand(kf), newCRDsCommand(), newPluginCommand())
	return root
}

// Execute runs the CLI and returns the process exit code.
func Execute() int {
	// client-go logs through klog (leader election; a reflector whose
	// watch a finished run cancelled, at error level, which klog would
	// print to stderr whatever its output); the CLI reports the lease and
	// the run itself, in its own words. The controller sets its own
	// logger.
	klog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal the run is being saved and the lease
	// released; a second Ctrl-C gets the default behaviour and kills.
	context.AfterFunc(ctx, stop)
	err := NewRootCommand().ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	// Errors are clean where they are made; a URL's credentials are hidden
	// once more here, the last place text passes before the terminal.
	fmt.Fprintln(os.Stderr, "error:", redact.Text(err.Error()))
	return exitCode(err)
}

// exitCode maps an error to the process exit code: an *exitError carries
// its own, anything else is invalid input or a refusal.
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitInvalid
}
