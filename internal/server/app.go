package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/server/wizard"
)

// noAppPlan is what the app phase says without --app-plan.
const noAppPlan = "No app plan configured (upshift serve --app-plan): nothing to upgrade"

// appPlan reads and resolves the app plan; nil without one.
func (s *Server) appPlan(ctx context.Context) (*resolve.Plan, error) {
	if s.cfg.AppPlan == "" {
		return nil, nil
	}
	l, err := plan.Load(s.cfg.AppPlan)
	if err != nil {
		return nil, fmt.Errorf("--app-plan %s: %w", s.cfg.AppPlan, err)
	}
	if errs := plan.Validate(l); len(errs) > 0 {
		return nil, fmt.Errorf("--app-plan %s: %w", s.cfg.AppPlan, errs.ToAggregate())
	}
	return s.resolve(ctx, "--app-plan "+s.cfg.AppPlan, l)
}

func (s *Server) handleAppPreflightsRun(w http.ResponseWriter, r *http.Request) {
	if err := decode(r, &struct{}{}); err != nil {
		writeError(w, err)
		return
	}
	rec, err := s.transition(r.Context(), wizard.AppPreflightsRunning, func(rec *record) error {
		rec.AppPreflights = &AppPreflights{Status: Status{State: StateRunning, Description: "Running app preflights", LastUpdated: time.Now().UTC()}}
		return nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	s.drive(rec)
	writeJSON(w, http.StatusOK, appPreflights(rec))
}

func (s *Server) handleAppPreflightsStatus(w http.ResponseWriter, r *http.Request) {
	rec, _, err := s.state.load(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, appPreflights(rec))
}

// appPreflights is the record's preflight results, Pending before any,
// as embedded-cluster's client reads them: every array [] (its types
// require them), the titles and strict failures derived from the
// results, so a record saved by an older server answers the same.
func appPreflights(rec *record) AppPreflights {
	out := AppPreflights{Status: Status{State: StatePending, Description: "App preflights have not run", LastUpdated: rec.LastUpdated}}
	if rec.AppPreflights != nil {
		out = *rec.AppPreflights
	}
	out.Titles = out.Output.normalize()
	out.HasStrictAppPreflightFailures = slices.ContainsFunc(out.Output.Fail, func(r PreflightResult) bool { return r.Strict })
	return out
}

// normalize makes every list of o [] rather than null (embedded-cluster's
// types require arrays) and returns the results' titles, failures first.
func (o *PreflightOutput) normalize() []string {
	o.Pass, o.Warn, o.Fail = nonNil(o.Pass), nonNil(o.Warn), nonNil(o.Fail)
	titles := []string{}
	for _, group := range [][]PreflightResult{o.Fail, o.Warn, o.Pass} {
		for _, r := range group {
			titles = append(titles, r.Title)
		}
	}
	return titles
}

// nonNil is rs, or [] for nil (JSON null is not an array).
func nonNil(rs []PreflightResult) []PreflightResult {
	if rs == nil {
		return []PreflightResult{}
	}
	return rs
}

// driveAppPreflights checks the app plan as apply will (its preflight)
// and runs its spec.checks, grouping the results by severity.
func (s *Server) driveAppPreflights(*record) {
	res := s.runAppPreflights()
	if s.ctx.Err() != nil {
		return
	}
	to := wizard.AppPreflightsSucceeded
	if res.Status.State == StateFailed {
		to = wizard.AppPreflightsFailed
	}
	s.end(to, func(r *record) { r.AppPreflights = res })
}

func (s *Server) runAppPreflights() *AppPreflights {
	out := &AppPreflights{Output: PreflightOutput{Pass: []PreflightResult{}, Warn: []PreflightResult{}, Fail: []PreflightResult{}}}
	done := func(desc string) *AppPreflights {
		out.Status = Status{State: StateSucceeded, Description: desc, LastUpdated: time.Now().UTC()}
		if len(out.Output.Fail) > 0 {
			out.Status.State, out.Status.Description = StateFailed, fmt.Sprintf("%d app preflight(s) failed: fix them and run the preflights again", len(out.Output.Fail))
		}
		return out
	}
	fail := func(title string, err error) *AppPreflights {
		out.Output.Fail = append(out.Output.Fail, PreflightResult{Title: title, Message: redact.Text(err.Error()), Strict: true})
		return done("")
	}
	p, err := s.appPlan(s.ctx)
	if err != nil {
		return fail("App plan", err)
	}
	if p == nil {
		out.Output.Pass = append(out.Output.Pass, PreflightResult{Title: "App plan", Message: noAppPlan})
		return done("App preflights passed")
	}
	sess, err := s.session()
	if err != nil {
		return fail("Cluster", err)
	}
	if errs := sess.Preflight(s.ctx, p); len(errs) > 0 {
		for _, e := range errs {
			out.Output.Fail = append(out.Output.Fail, PreflightResult{Title: e.Field, Message: redact.Text(e.ErrorBody()), Strict: true})
		}
	} else {
		out.Output.Pass = append(out.Output.Pass, PreflightResult{Title: "Plan " + p.Plan.Name, Strict: true,
			Message: "the plan's preflight found no problem: its kinds are served, its namespaces exist or come with it, its access and sources are there"})
	}
	checks, err := sess.Checks(s.ctx, p)
	if err != nil {
		return fail("spec.checks", err)
	}
	for _, c := range checks {
		res := PreflightResult{Title: c.Name, Message: redact.Text(c.Message), Strict: c.Severity == v1alpha1.SeverityBlocking}
		switch {
		case c.Passed, c.Severity == v1alpha1.SeverityInfo:
			out.Output.Pass = append(out.Output.Pass, res)
		case c.Severity == v1alpha1.SeverityWarning:
			out.Output.Warn = append(out.Output.Warn, res)
		default:
			out.Output.Fail = append(out.Output.Fail, res)
		}
	}
	return done("App preflights passed")
}

func (s *Server) handleAppUpgrade(w http.ResponseWriter, r *http.Request) {
	var req AppUpgradeRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.IgnoreAppPreflights {
		writeError(w, badRequest("ignoreAppPreflights", "ignoreAppPreflights is not supported: a failed app preflight is one the run would refuse on; fix it, run the preflights again, and leave it false"))
		return
	}
	ctx := r.Context()
	if err := s.leaseFree(ctx); err != nil {
		writeError(w, err)
		return
	}
	p, err := s.appPlan(ctx)
	if err != nil {
		writeError(w, badRequest("", "%v", err))
		return
	}
	rec, err := s.transition(ctx, wizard.AppUpgrading, func(rec *record) error {
		rec.RetryOf = nil
		if rec.State == wizard.AppUpgradeFailed {
			rec.RetryOf = s.failedRun(rec.App)
		}
		rec.App = nil
		if p != nil {
			pr := PlannedRun{Run: p.RunName(), Version: p.Plan.Spec.Version}
			for _, st := range p.Plan.Spec.Stages {
				pr.Stages = append(pr.Stages, st.Name)
			}
			rec.App = []PlannedRun{pr}
		}
		rec.AppStatus = Status{State: StateRunning, Description: "Upgrading the app", LastUpdated: time.Now().UTC()}
		return nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	if p != nil {
		sess, err := s.session()
		if err == nil {
			var pv *runner.PlanPreview
			if pv, err = sess.Preview(ctx, p); err == nil {
				s.savePreview(ctx, p.RunName(), redactPreview(pv))
			}
		}
		if err != nil {
			s.cfg.Log(redact.Text(fmt.Sprintf("the preview of the app plan is not kept: %v", err)))
		}
	}
	s.drive(rec)
	writeJSON(w, http.StatusOK, s.appProgress(rec))
}

func (s *Server) handleAppStatus(w http.ResponseWriter, r *http.Request) {
	rec, _, err := s.state.load(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.appProgress(rec))
}

// appProgress is the app phase as embedded-cluster's AppUpgrade, with
// components and runs as Infra's.
func (s *Server) appProgress(rec *record) Progress {
	overall := rec.AppStatus
	if overall.State == "" {
		overall = Status{State: StatePending, Description: "The app upgrade has not started", LastUpdated: rec.LastUpdated}
	}
	if overall.LastUpdated.IsZero() {
		overall.LastUpdated = rec.LastUpdated
	}
	p := progress(rec.App, s.runsOf(rec.App), overall)
	if rec.State == wizard.AppUpgrading {
		p.Status.State = StateRunning
		p.Status.Description, p.NextWindow = s.driving(appDrive, rec.App, p.Waiting, overall.Description)
	}
	return p
}

// driveApp applies the app plan (resuming its unfinished run) and
// records how it ended.
func (s *Server) driveApp(rec *record) {
	s.driveOn(appDrive, func() (wizard.State, Status, error) { return s.runApp(rec) },
		func(to wizard.State, st Status) {
			s.cfg.Log("app upgrade: " + st.Description)
			s.end(to, func(r *record) { r.AppStatus, r.RetryOf = st, nil })
		})
}

func (s *Server) runApp(rec *record) (wizard.State, Status, error) {
	failed := func(err error) (wizard.State, Status, error) {
		return wizard.AppUpgradeFailed, Status{State: StateFailed, Description: redact.Text(describeError(err)), LastUpdated: time.Now().UTC()}, err
	}
	p, err := s.appPlan(s.ctx)
	if err != nil {
		return failed(err)
	}
	if p == nil {
		return wizard.Succeeded, Status{State: StateSucceeded, Description: noAppPlan, LastUpdated: time.Now().UTC()}, nil
	}
	sess, err := s.session()
	if err != nil {
		return failed(err)
	}
	sess.ReadAhead(s.ctx, p)
	if errs := sess.Preflight(s.ctx, p); len(errs) > 0 {
		return failed(fmt.Errorf("--app-plan %s: preflight: %w", s.cfg.AppPlan, errs.ToAggregate()))
	}
	out, err := sess.Apply(s.ctx, p, s.retryStill(rec.RetryOf))
	if err != nil {
		return failed(err)
	}
	if out.Run != nil && out.Run.Status.Phase == v1alpha1.RunSucceeded && out.Stopped == nil {
		return wizard.Succeeded, Status{State: StateSucceeded, Description: "Upgrade complete", LastUpdated: time.Now().UTC()}, nil
	}
	return wizard.AppUpgradeFailed, stoppedStatus(out), out.Stopped
}
