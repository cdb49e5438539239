package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/report"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/server/wizard"
	"github.com/upshift-dev/upshift/internal/supportbundle"
)

func (s *Server) handleRunsList(w http.ResponseWriter, r *http.Request) {
	sess, err := s.session()
	if err != nil {
		writeError(w, err)
		return
	}
	runs, err := sess.Store().List(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	sort.Slice(runs, func(i, j int) bool { return runs[j].CreationTimestamp.Before(&runs[i].CreationTimestamp) })
	items := make([]RunSummary, len(runs))
	for i := range runs {
		items[i] = summary(&runs[i])
	}
	writeJSON(w, http.StatusOK, struct {
		Items []RunSummary `json:"items"`
	}{items})
}

// getRun reads the run of the path's name from the store (which also
// reads records of earlier versions).
func (s *Server) getRun(ctx context.Context, name string) (*runner.Session, *v1alpha1.UpgradeRun, error) {
	sess, err := s.session()
	if err != nil {
		return nil, nil, err
	}
	run, err := sess.Store().Get(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return sess, run, nil
}

func (s *Server) handleRunGet(w http.ResponseWriter, r *http.Request) {
	_, run, err := s.getRun(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, RunDetail{Summary: summary(run), Run: redact.Run(run)})
}

func (s *Server) handleRunReport(w http.ResponseWriter, r *http.Request) {
	_, run, err := s.getRun(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, err)
		return
	}
	rep := report.Build(run)
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
		writeJSON(w, http.StatusOK, rep)
	case "markdown", "md":
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		_, _ = w.Write([]byte(redact.Text(report.Markdown(rep, apiCommand))))
	default:
		writeError(w, badRequest("format", "format %q: use json (the default) or markdown", f))
	}
}

// apiCommand renders a report's next action as the API call that does it.
func apiCommand(a report.Action) string {
	switch a.Kind {
	case report.Approve:
		return fmt.Sprintf("POST /api/runs/%s/approve {\"step\": %q}", a.Run, a.Step)
	case report.Retry:
		return fmt.Sprintf("POST /api/runs/%s/retry", a.Run)
	case report.RollBack:
		return fmt.Sprintf("POST /api/runs/%s/rollback", a.Run)
	case report.Watch:
		return fmt.Sprintf("GET /api/runs/%s/events", a.Run)
	}
	return ""
}

func (s *Server) handleApprove(w http.ResponseWriter, r *http.Request) {
	var req ApproveRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	sess, _, err := s.getRun(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, err)
		return
	}
	if _, err := sess.ApproveAs(r.Context(), r.PathValue("name"), req.Step, caller(r)); err != nil {
		writeError(w, refusal(err))
		return
	}
	s.answerRun(w, r, http.StatusOK)
}

func (s *Server) handleAbort(w http.ResponseWriter, r *http.Request) {
	sess, _, err := s.getRun(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, err)
		return
	}
	if _, err := sess.Abort(r.Context(), r.PathValue("name")); err != nil {
		writeError(w, refusal(err))
		return
	}
	s.answerRun(w, r, http.StatusOK)
}

// handleRollback rolls the run back in the background (202).
func (s *Server) handleRollback(w http.ResponseWriter, r *http.Request) {
	s.background(w, r, CommandRollback)
}

// handleRetry retries a run. A run of the wizard's failed phase starts
// that phase again (a rolled-back hop gets a new attempt, and the hops
// after it follow); any other run that failed without rollback retries
// its failed step in the background.
func (s *Server) handleRetry(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	rec, _, err := s.state.load(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	phase := wizard.State("")
	switch {
	case rec.State == wizard.InfrastructureUpgradeFailed && planned(rec.Infra, name):
		phase = wizard.InfrastructureUpgrading
	case rec.State == wizard.AppUpgradeFailed && planned(rec.App, name):
		phase = wizard.AppUpgrading
	}
	_, run, err := s.getRun(r.Context(), name)
	if err != nil {
		writeError(w, err)
		return
	}
	if phase != "" && run.Status.Phase != v1alpha1.RunFailed {
		if err := s.leaseFree(r.Context()); err != nil {
			writeError(w, err)
			return
		}
		rec, err := s.transition(r.Context(), phase, func(rec *record) error {
			rec.RetryOf = &RetryOf{Run: name, Attempt: run.Status.Attempt}
			if phase == wizard.InfrastructureUpgrading {
				rec.InfraStatus = Status{State: StateRunning, Description: "Retrying " + name, LastUpdated: time.Now().UTC()}
			} else {
				rec.AppStatus = Status{State: StateRunning, Description: "Retrying " + name, LastUpdated: time.Now().UTC()}
			}
			return nil
		})
		if err != nil {
			writeError(w, err)
			return
		}
		s.drive(rec)
		s.answerRun(w, r, http.StatusAccepted)
		return
	}
	if run.Status.Phase != v1alpha1.RunFailed {
		writeError(w, &APIError{StatusCode: http.StatusConflict, Message: fmt.Sprintf(
			"run %s is %s: only a run that failed without rollback retries its failed step; a rolled-back run of the current upgrade is retried by starting its phase again", name, run.Status.Phase)})
		return
	}
	s.background(w, r, CommandRetry)
}

// notDriving refuses (409) a run command while the wizard drives: between
// two hops the lease is free, and a rollback taking it then would make
// the next hop fail for no fault of its own.
func (s *Server) notDriving(ctx context.Context) error {
	rec, _, err := s.state.load(ctx)
	if err != nil {
		return err
	}
	if rec.State.Driving() {
		return &APIError{StatusCode: http.StatusConflict, Message: fmt.Sprintf("the wizard is driving (%s): abort its run first (POST /api/runs/{name}/abort), or wait until it ends", rec.State)}
	}
	return nil
}

// command drives cmd in the background; resumed says a server before
// this one started it (a rollback then goes on where it stood, a retry's
// run is resumed from its saved plan). false: the server is stopping.
func (s *Server) command(sess *runner.Session, cmd Command, resumed bool) bool {
	return s.goDrive(func() {
		var out *runner.Result
		var err error
		switch {
		case cmd.Kind == CommandRollback:
			out, err = sess.Rollback(s.ctx, cmd.Run)
		case resumed:
			out, err = sess.Resume(s.ctx, cmd.Run, false) // an abort after the retry holds
		default:
			out, err = sess.Retry(s.ctx, cmd.Run)
		}
		if s.ctx.Err() != nil && (err == nil || interrupted(err)) && (out == nil || out.Stopped != nil) {
			return // stopping: the next server drives it on
		}
		switch {
		case err != nil:
			s.cfg.Log(redact.Text(fmt.Sprintf("%s of run %s: %v", cmd.Kind, cmd.Run, err)))
		case out.Run != nil:
			s.cfg.Log(fmt.Sprintf("%s of run %s: %s", cmd.Kind, cmd.Run, out.Run.Status.Phase))
		}
		s.update(func(rec *record) bool {
			rec.Commands = slices.DeleteFunc(rec.Commands, func(c Command) bool { return c == cmd })
			return true
		})
		if err == nil && out.Run != nil {
			s.noteEnd(out.Run)
		}
	})
}

func planned(runs []PlannedRun, name string) bool {
	return slices.ContainsFunc(runs, func(p PlannedRun) bool { return p.Run == name })
}

// background drives a run command (rollback, retry) after answering 202;
// its progress is the run's, seen through status and events. The command
// is kept in the wizard's record until it ends, so a server stopped
// meanwhile has the next one drive it on.
func (s *Server) background(w http.ResponseWriter, r *http.Request, kind string) {
	name := r.PathValue("name")
	if err := s.notDriving(r.Context()); err != nil {
		writeError(w, err)
		return
	}
	sess, _, err := s.getRun(r.Context(), name)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.leaseFree(r.Context()); err != nil {
		writeError(w, err)
		return
	}
	cmd := Command{Run: name, Kind: kind}
	s.update(func(rec *record) bool {
		rec.Commands = append(rec.Commands, cmd)
		return true
	})
	if !s.command(sess, cmd, false) {
		writeError(w, &APIError{StatusCode: http.StatusServiceUnavailable, Message: "the server is stopping: ask again once it is back"})
		return
	}
	s.answerRun(w, r, http.StatusAccepted)
}

// noteEnd tells the wizard how a rollback or retry of one of its runs
// ended: a phase that had ended well goes back to failed when one of its
// runs no longer stands (what comes after it must not go on), and a
// failed phase's description says where its run is now.
func (s *Server) noteEnd(run *v1alpha1.UpgradeRun) {
	st := stoppedStatus(&runner.Result{Run: run})
	if run.Status.Phase == v1alpha1.RunSucceeded {
		st = Status{State: StateFailed, Description: fmt.Sprintf("Run %s succeeded after a retry: start the upgrade again to go on", run.Name), LastUpdated: st.LastUpdated}
	}
	rec, _, err := s.state.load(s.ctx)
	if err != nil {
		s.cfg.Log(fmt.Sprintf("tell the wizard run %s is %s: %v", run.Name, run.Status.Phase, err))
		return
	}
	standsNoMore := run.Status.Phase != v1alpha1.RunSucceeded && !rec.State.Driving()
	switch {
	case standsNoMore && planned(rec.Infra, run.Name) && rec.State != wizard.InfrastructureUpgradeFailed:
		s.end(wizard.InfrastructureUpgradeFailed, func(r *record) { r.InfraStatus = st })
		return
	case standsNoMore && planned(rec.App, run.Name) && rec.State == wizard.Succeeded:
		s.end(wizard.AppUpgradeFailed, func(r *record) { r.AppStatus = st })
		return
	}
	s.update(func(rec *record) bool {
		switch {
		case rec.State == wizard.InfrastructureUpgradeFailed && planned(rec.Infra, run.Name):
			rec.InfraStatus = st
		case rec.State == wizard.AppUpgradeFailed && planned(rec.App, run.Name):
			rec.AppStatus = st
		default:
			return false
		}
		return true
	})
}

// answerRun answers with the run's summary as it is now.
func (s *Server) answerRun(w http.ResponseWriter, r *http.Request, code int) {
	_, run, err := s.getRun(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, code, summary(run))
}

// refusal is a command the run's state does not allow: 409 with the
// engine's reason.
func refusal(err error) error {
	if errors.Is(err, runner.ErrRefused) || errors.Is(err, engine.ErrNotAllowed) {
		return &APIError{StatusCode: http.StatusConflict, Message: err.Error()}
	}
	return err
}

// handleRunSupportBundle streams a support bundle of the run: its record
// and report, the events, objects and container logs of its plan's
// namespaces and the runs namespace, and the nodes, redacted (as
// `upshift support-bundle NAME`). It is written as it is collected.
func (s *Server) handleRunSupportBundle(w http.ResponseWriter, r *http.Request) {
	sess, run, err := s.getRun(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", "upshift-support-"+run.Name+".tar.gz"))
	_, err = supportbundle.Write(r.Context(), w, s.deps.Clientset, supportbundle.Options{
		Runs: []*v1alpha1.UpgradeRun{run}, RunsNamespace: s.cfg.Session.Namespace,
		Namespaces: supportbundle.SourceNamespaces(r.Context(), sess.Store(), run)})
	if err != nil {
		s.cfg.Log(redact.Text(fmt.Sprintf("support bundle of run %s: %v", run.Name, err)))
	}
}
