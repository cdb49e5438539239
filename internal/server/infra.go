package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/server/auth"
	"github.com/upshift-dev/upshift/internal/server/wizard"
	"github.com/upshift-dev/upshift/internal/upgrade"
)

// check solves the request's upgrade and previews its hops, hop 1
// preflighted against the cluster as it is; it changes nothing.
func (s *Server) check(ctx context.Context, req UpgradeRequest) (*CheckResult, []PlannedRun, error) {
	cat, ureq, err := s.openCatalog(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	sol, err := upgrade.Solve(ctx, cat, s.deps, ureq)
	if err != nil {
		return nil, nil, s.defaultTargetHint(req, planError(err))
	}
	sess, err := s.session()
	if err != nil {
		return nil, nil, err
	}
	hops, err := sol.Previews(ctx, sess, s.deps, s.resolve)
	if err != nil {
		return nil, nil, planError(err)
	}
	res := &CheckResult{
		RequiresInfraUpgrade: len(hops) > 0, CurrentVersion: upgrade.VersionString(sol.From), TargetVersion: sol.To.String(),
		Findings: sol.Findings, Hops: hops, Describe: []string{},
	}
	if sol.Kubernetes != nil {
		res.Kubernetes = sol.Kubernetes.String()
	}
	for _, l := range sol.Describe() {
		res.Describe = append(res.Describe, redact.Text(l))
	}
	planned := make([]PlannedRun, len(hops))
	for i, h := range hops {
		planned[i] = PlannedRun{Run: h.Plan, Version: h.To, From: h.From, Stages: h.Stages}
		hops[i].Note, hops[i].Preview = redact.Text(h.Note), redactPreview(h.Preview)
	}
	return res, planned, nil
}

// defaultTargetHint says where a target the request did not name came
// from, when the target is at fault: the client cannot see --target.
func (s *Server) defaultTargetHint(req UpgradeRequest, err error) error {
	var ae *APIError
	if req.TargetVersion != "" || !errors.As(err, &ae) || ae.Field != "targetVersion" {
		return err
	}
	if s.cfg.Target != "" {
		ae.Message += fmt.Sprintf(" (no targetVersion was named: the target is upshift serve's --target %s; name targetVersion, or restart the server with another --target)", s.cfg.Target)
	} else {
		ae.Message += " (no targetVersion was named: the target is the catalog's newest release; name targetVersion, or start the server with --target)"
	}
	return err
}

func (s *Server) handleInfraCheck(w http.ResponseWriter, r *http.Request) {
	var req UpgradeRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Catalog != "" && req.Catalog != s.cfg.Catalog && role(r) != auth.Admin {
		// Another catalog is read, and its plans' sources resolved,
		// with the server's access: not a viewer's to ask for.
		writeError(w, &APIError{StatusCode: http.StatusForbidden, Field: "catalog", Message: "a viewer checks the server's catalog only: leave catalog out, or log in as admin"})
		return
	}
	res, _, err := s.check(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// handleInfraUpgrade starts the infrastructure upgrade: it checks as
// check does (a problem answers 400 before anything changed), moves the
// wizard to InfrastructureUpgrading and drives the hops in the
// background. Started again after a failure, the failed hop (rolled
// back) gets a new attempt.
func (s *Server) handleInfraUpgrade(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req UpgradeRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	rec, _, err := s.state.load(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	// Refuse early what the state machine refuses anyway (409), before
	// the host preflights' and the check's reads.
	if err := wizard.Check(rec.State, wizard.InfrastructureUpgrading); err != nil {
		writeError(w, err)
		return
	}
	if err := s.airgapGate(rec); err != nil {
		writeError(w, err)
		return
	}
	if rec.State, err = s.hostGate(ctx, req, rec.State); err != nil {
		writeError(w, err)
		return
	}
	if req.TargetVersion == "" && againAfterFailure(rec) {
		req = rec.Request // start the failed upgrade again as it was asked
	}
	if err := s.leaseFree(ctx); err != nil {
		writeError(w, err)
		return
	}
	res, planned, err := s.check(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	for _, l := range res.Describe {
		if strings.Contains(l, "warning:") {
			s.cfg.Log(strings.TrimSpace(l)) // the check showed it; the start's log keeps it
		}
	}
	// The target as resolved (--target or the newest release when the
	// request names none) is kept: a restart drives on to the same one.
	req.TargetVersion = res.TargetVersion
	if err := s.noOtherUnfinished(ctx, planned); err != nil {
		writeError(w, err)
		return
	}
	rec, err = s.transition(ctx, wizard.InfrastructureUpgrading, func(rec *record) error {
		if err := s.airgapGate(rec); err != nil {
			return err
		}
		rec.RetryOf = nil
		if againAfterFailure(rec) && rec.Request.TargetVersion == req.TargetVersion {
			rec.RetryOf = s.failedRun(rec.Infra)
		}
		rec.Request, rec.Current, rec.Infra = req, res.CurrentVersion, planned
		rec.App, rec.AppPreflights, rec.AppStatus, rec.SupportBundle = nil, nil, Status{}, nil
		rec.InfraStatus = Status{State: StateRunning, Description: "Upgrading infrastructure to " + req.TargetVersion, LastUpdated: time.Now().UTC()}
		return nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	for _, h := range res.Hops {
		s.savePreview(ctx, h.Plan, h.Preview)
	}
	s.drive(rec)
	writeJSON(w, http.StatusOK, s.infraProgress(rec))
}

// againAfterFailure says a start goes at the infrastructure upgrade that
// failed last: from InfrastructureUpgradeFailed, or from the host
// preflights or airgap processing run after it (embedded-cluster's
// client runs them first).
func againAfterFailure(rec *record) bool {
	return rec.State == wizard.InfrastructureUpgradeFailed || ((rec.State.HostPreflights() || rec.State.Airgap()) && rec.InfraStatus.State == StateFailed)
}

func (s *Server) handleInfraStatus(w http.ResponseWriter, r *http.Request) {
	rec, _, err := s.state.load(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.infraProgress(rec))
}

// noOtherUnfinished refuses (409) a start while a run that is not one of
// the hops is unfinished (the app's, failed without rollback; another
// plan's, aborted): the runner would refuse the first hop, after the
// start had answered.
func (s *Server) noOtherUnfinished(ctx context.Context, planned []PlannedRun) error {
	sess, err := s.session()
	if err != nil {
		return err
	}
	runs, err := sess.Store().List(ctx)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if r.Status.Phase.Finished() || slices.ContainsFunc(planned, func(p PlannedRun) bool { return p.Run == r.Name }) {
			continue
		}
		return &APIError{StatusCode: http.StatusConflict, Message: fmt.Sprintf(
			"run %s is unfinished (%s): roll it back or retry it first (POST /api/runs/%s/rollback or /retry); nothing was changed", r.Name, r.Status.Phase, r.Name)}
	}
	return nil
}

// leaseFree refuses (409) when another driver (a CLI, the controller)
// holds the cluster's lease: the start would only wait for it.
func (s *Server) leaseFree(ctx context.Context) error {
	id, valid, err := lease.Holder(ctx, s.deps.Clientset, s.cfg.Session.Namespace, lease.DefaultName)
	if err != nil || !valid {
		return err
	}
	return fmt.Errorf("%w: the cluster's lease is held by %s, which drives an upgrade now; wait until it ends (upshift status)", errBusy, id)
}

// infraProgress is the infrastructure phase as embedded-cluster's Infra.
func (s *Server) infraProgress(rec *record) Progress {
	overall, target := rec.InfraStatus, rec.Request.TargetVersion
	switch {
	case rec.State == wizard.New || overall.State == "":
		// Not started yet (host preflights or airgap processing may have
		// run): Pending, which embedded-cluster's UI starts from.
		target = s.cfg.Target // "" until a start resolves the newest release
		overall = Status{State: StatePending, Description: "Ready to upgrade", LastUpdated: rec.LastUpdated}
		if target != "" {
			overall.Description += " to " + target
		}
	case rec.State == wizard.InfrastructureUpgrading:
		overall.State = StateRunning
	}
	if overall.LastUpdated.IsZero() {
		overall.LastUpdated = rec.LastUpdated
	}
	p := progress(rec.Infra, s.runsOf(rec.Infra), overall)
	p.TargetVersion, p.SupportBundle = target, bundleOf(rec.SupportBundle)
	if rec.State == wizard.InfrastructureUpgrading {
		p.Status.Description, p.NextWindow = s.driving(infraDrive, rec.Infra, p.Waiting, "Upgrading infrastructure to "+target)
		if s.bundling.Load() {
			p.Status.Description = "Collecting a support bundle"
		}
	}
	return p
}

// runsOf reads the planned runs from the shared watch.
func (s *Server) runsOf(planned []PlannedRun) map[string]*v1alpha1.UpgradeRun {
	out := map[string]*v1alpha1.UpgradeRun{}
	for _, p := range planned {
		if r := s.runs.get(s.cfg.Session.Namespace, p.Run); r != nil {
			out[p.Run] = r
		}
	}
	return out
}

// The drives' names (driveOn's what).
const (
	infraDrive = "the infrastructure upgrade"
	appDrive   = "the app upgrade"
)

// driving describes a phase on the move: what it waits for (an approval,
// a maintenance window: when it opens), or the stage of the run in
// progress.
func (s *Server) driving(drive string, planned []PlannedRun, waiting *Waiting, fallback string) (string, *time.Time) {
	if ww := s.windows.get(drive); ww != nil {
		next := ww.Next.UTC()
		return "Waiting for a maintenance window: " + strings.TrimPrefix(ww.Error(), "waiting: "), &next
	}
	return s.onTheMove(planned, waiting, fallback), nil
}

// onTheMove is what an approval or the run in progress says.
func (s *Server) onTheMove(planned []PlannedRun, waiting *Waiting, fallback string) string {
	if waiting != nil {
		return fmt.Sprintf("Waiting for approval of step %s (run %s)", waiting.Step, waiting.Run)
	}
	for _, p := range planned {
		r := s.runs.get(s.cfg.Session.Namespace, p.Run)
		if r == nil || r.Status.Phase.Finished() || r.Status.Stage == "" {
			continue
		}
		if r.Status.Phase == v1alpha1.RunRollingBack {
			return "Rolling back " + r.Status.Stage
		}
		return "Upgrading " + r.Status.Stage
	}
	return fallback
}

// driveInfra runs the hops (resuming an unfinished one first) and
// records how they ended. When the server stops meanwhile, the state
// stays InfrastructureUpgrading for the next server to drive on; while
// another driver holds the cluster's lease (a second server, a CLI), it
// waits for it rather than calling the upgrade failed.
func (s *Server) driveInfra(rec *record) {
	s.driveOn(infraDrive, func() (wizard.State, Status, error) { return s.runInfra(rec) },
		func(to wizard.State, st Status) {
			s.cfg.Log(fmt.Sprintf("infrastructure upgrade to %s: %s", rec.Request.TargetVersion, st.Description))
			bundle := s.infraBundle(rec)
			s.end(to, func(r *record) { r.InfraStatus, r.RetryOf, r.SupportBundle = st, nil, bundle })
		})
}

// runInfra drives the hops once: where they ended, and the error that
// stopped them (nil when a run ended on its own).
func (s *Server) runInfra(rec *record) (wizard.State, Status, error) {
	failed := func(err error) (wizard.State, Status, error) {
		return wizard.InfrastructureUpgradeFailed, Status{State: StateFailed, Description: redact.Text(describeError(err)), LastUpdated: time.Now().UTC()}, err
	}
	cat, ureq, err := s.openCatalog(s.ctx, rec.Request)
	if err != nil {
		return failed(err)
	}
	sess, err := s.sessionFor(s.state.owner(rec))
	if err != nil {
		return failed(err)
	}
	hops := &upgrade.Hops{Session: sess, Clients: s.deps, Catalog: cat, Request: ureq, Retry: s.retryStill(rec.RetryOf), Resolve: s.resolve,
		Notice: func(msg string) { s.cfg.Log(redact.Text(msg)) }}
	res, err := hops.Run(s.ctx)
	if err != nil {
		return failed(err)
	}
	if res.Stopped != nil {
		return wizard.InfrastructureUpgradeFailed, stoppedStatus(res.Stopped), res.Stopped.Stopped
	}
	desc := "Upgrade to " + rec.Request.TargetVersion + " complete"
	if len(res.Hops) == 0 && res.Solution != nil {
		desc = fmt.Sprintf("Nothing to upgrade: the cluster runs %s already", upgrade.VersionString(res.Solution.From))
	}
	return wizard.InfrastructureUpgraded, Status{State: StateSucceeded, Description: desc, LastUpdated: time.Now().UTC()}, nil
}

// stoppedStatus words a run that did not reach its version.
func stoppedStatus(out *runner.Result) Status {
	st := Status{State: StateFailed, LastUpdated: time.Now().UTC()}
	r := out.Run
	if r == nil {
		st.Description = redact.Text(describeError(out.Stopped))
		return st
	}
	cause := r.Status.Failure
	if cause == "" {
		cause = r.Status.Message
	}
	switch r.Status.Phase {
	case v1alpha1.RunRolledBack:
		st.Description = fmt.Sprintf("Run %s failed and was rolled back, restore verified: %s", r.Name, cause)
	case v1alpha1.RunAborted:
		st.Description = fmt.Sprintf("Run %s was aborted: roll it back or retry it", r.Name)
	case v1alpha1.RunFailed, v1alpha1.RunRollbackFailed:
		st.Description = fmt.Sprintf("Run %s failed and was not rolled back (%s): an operator must act (roll it back or retry it): %s", r.Name, r.Status.Phase, cause)
	default:
		st.Description = fmt.Sprintf("Run %s stopped (%s): %s", r.Name, r.Status.Phase, describeError(out.Stopped))
	}
	st.Description = redact.Text(st.Description)
	return st
}

// describeError is an error's text with a preflight's problems listed.
func describeError(err error) string {
	if err == nil {
		return "stopped"
	}
	var pe *upgrade.PreflightError
	var removed *upgrade.RemovedAPIsError
	var lines []string
	switch {
	case errors.As(err, &pe):
		for _, e := range pe.Errs {
			lines = append(lines, e.Error())
		}
	case errors.As(err, &removed):
		lines = removed.Report.Lines()
	default:
		return err.Error()
	}
	return err.Error() + ":\n  " + strings.Join(lines, "\n  ")
}
