package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
)

// finishRun prints where the command left the run and returns the error
// that carries its exit code.
func finishRun(cmd *cobra.Command, out *runner.Result, output string, forRollback bool) error {
	return finishRunResumedBy(cmd, out, output, forRollback, applyAgain)
}

// applyAgain is how a run stopped by apply, rollback or retry goes on.
const applyAgain = "`upshift apply -f` with the same plan"

// finishRunResumedBy is finishRun for a command whose run goes on by
// another command line than apply's (upgrade's).
func finishRunResumedBy(cmd *cobra.Command, out *runner.Result, output string, forRollback bool, resume string) error {
	w := cmd.OutOrStdout()
	switch out.Decision.Verdict {
	case engine.AlreadyDone, engine.ReportFailed:
		fmt.Fprintln(cmd.ErrOrStderr(), redact.Text(out.Decision.Reason+decisionHint(out.Decision)))
	}
	if output != "" && out.Run != nil {
		if err := printObject(w, redact.Run(out.Run), output); err != nil {
			return err
		}
	} else if out.Run != nil {
		printRunSummary(w, out.Run)
	}
	code := runExitCode(out, forRollback)
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code, err: errors.New(whatNext(out, code, resume))}
}

// whatNext says why the command did not reach its goal and what to run.
// resume is the command line that goes on with a stopped run.
func whatNext(out *runner.Result, code int, resume string) string {
	return redact.Text(nextStep(out, code, resume))
}

func nextStep(out *runner.Result, code int, resume string) string {
	r := redact.Run(out.Run)
	var notSaved *runner.NotSavedError
	var window *runner.WindowWait
	switch {
	case errors.As(out.Stopped, &notSaved) && !errors.Is(out.Stopped, runner.ErrLeaseLost):
		return fmt.Sprintf("run %s %v\nthe record holds the last transition saved before: `upshift status %s` shows it; an operator must make the record writable again, then %s resumes the run", r.Name, notSaved, r.Name, resume)
	case errors.Is(out.Stopped, runner.ErrInterrupted):
		return fmt.Sprintf("run %s interrupted and saved; run %s to resume it", r.Name, resume)
	case errors.As(out.Stopped, &window):
		return fmt.Sprintf("run %s is %v; it is saved, nothing of the stage started: %s goes on in the window", r.Name, out.Stopped, resume)
	case errors.Is(out.Stopped, runner.ErrWaiting):
		return fmt.Sprintf("run %s is %v; it is saved: `upshift approve %s` approves a waiting approval step, and %s goes on (--wait keeps it waiting)", r.Name, out.Stopped, r.Name, resume)
	case errors.Is(out.Stopped, runner.ErrAPIUnavailable):
		return fmt.Sprintf("run %s stopped: %v\nnothing was rolled back for it; the run is saved: run %s to resume once the API server answers", r.Name, out.Stopped, resume)
	case errors.Is(out.Stopped, runner.ErrLeaseLost):
		return fmt.Sprintf("lost the lease of run %s: another process may drive it now; `upshift status %s` shows where it is", r.Name, r.Name)
	case errors.Is(out.Stopped, runner.ErrAborted), r.Status.Phase == v1alpha1.RunAborted:
		return fmt.Sprintf("run %s aborted; backups kept. Resume with %s or undo with `upshift rollback %s`", r.Name, resume, r.Name)
	}
	if out.Stopped != nil {
		return fmt.Sprintf("run %s stopped: %v\nit is saved up to its last transition: `upshift status %s` shows where; %s resumes it", r.Name, out.Stopped, r.Name, resume)
	}
	switch r.Status.Phase {
	case v1alpha1.RunRolledBack:
		return fmt.Sprintf("run %s failed and was rolled back, restore verified: %s", r.Name, r.Status.Failure)
	case v1alpha1.RunFailed:
		return fmt.Sprintf("run %s failed and was NOT rolled back: %s\nan operator must act: `upshift retry %s` after fixing the cause, or `upshift rollback %s`", r.Name, r.Status.Failure, r.Name, r.Name)
	case v1alpha1.RunRollbackFailed:
		return fmt.Sprintf("run %s: the rollback failed: %s\nan operator must act: inspect with `upshift status %s` and `upshift backup show %s`, fix the cause, then `upshift rollback %s` again", r.Name, r.Status.Message, r.Name, r.Name, r.Name)
	}
	return fmt.Sprintf("run %s is %s (exit %d)", r.Name, r.Status.Phase, code)
}

func printObject(w io.Writer, obj any, output string) error {
	if output == "yaml" {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // keep "<redacted>" and "<inline, …>" readable
	return enc.Encode(obj)
}

// preflightProblems lists what the cluster check found.
func preflightProblems(file string, errs field.ErrorList) error {
	return listProblems(fmt.Sprintf("%s: preflight found %d problem(s) on the cluster, nothing was changed:", file, len(errs)), errs)
}

// problems turns validation errors into one error listing every problem.
func problems(file string, errs field.ErrorList) error {
	return listProblems(fmt.Sprintf("%s: %d problem(s), nothing was changed:", file, len(errs)), errs)
}

func listProblems(header string, errs field.ErrorList) error {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Error()
	}
	return listLines(header, lines)
}

func listLines(header string, lines []string) error {
	var b strings.Builder
	b.WriteString(header)
	for _, l := range lines {
		fmt.Fprintf(&b, "\n  %s", l)
	}
	return errors.New(b.String())
}
