package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"

	"github.com/upshift-dev/upshift/internal/report"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/server/auth"
)

// access is who may call a route.
type access int

const (
	// open: no token (health, login, the API document, the UI).
	open access = iota
	// read: any valid token.
	read
	// act: an admin token; a viewer's gets 403.
	act
)

// route is one route of the API: how it is served and how the OpenAPI
// document describes it, from the same table, so the two cannot drift.
type route struct {
	method, path string
	access       access
	summary      string
	// request and response are the bodies' Go types (nil: none; the
	// document reflects their JSON schema).
	request, response any
	// status is the success code; 200 when 0.
	status  int
	handler http.HandlerFunc
	// contentType of a body that is not JSON (the response's, or the
	// request's for a POST taking YAML).
	contentType string
}

// alias serves a route under another path too (embedded-cluster's names
// next to the seed's).
func alias(r route, path string) route {
	r.path = path
	return r
}

func (s *Server) routes() []route {
	infraStart := route{method: "POST", path: "/api/linux/upgrade/infra/upgrade", access: act,
		summary: "Start the infrastructure upgrade: the catalog's hops to targetVersion (none: the server's --target, else the catalog's newest release), driven in the background",
		request: UpgradeRequest{}, response: Progress{}, handler: s.handleInfraUpgrade}
	return append([]route{
		{method: "GET", path: "/api/health", access: open, summary: "Health", response: map[string]string{}, handler: handleHealth},
		{method: "POST", path: "/api/auth/login", access: open, summary: "Log in with a password; the answer's token goes into Authorization: Bearer",
			request: LoginRequest{}, response: LoginResponse{}, handler: s.handleLogin},
		{method: "GET", path: "/api/openapi.json", access: open, summary: "This document", response: map[string]any{}, handler: s.handleOpenAPI},

		{method: "GET", path: "/api/linux/upgrade/state", access: read, summary: "Where the wizard is", response: WizardState{}, handler: s.handleState},
		{method: "POST", path: "/api/linux/upgrade/infra/check", access: read,
			summary: "Whether an upgrade is needed: current and target version, the hops and their preview; changes nothing",
			request: UpgradeRequest{}, response: CheckResult{}, handler: s.handleInfraCheck},
		infraStart,
		alias(infraStart, "/api/linux/upgrade/infra/start"),
		{method: "GET", path: "/api/linux/upgrade/infra/status", access: read, summary: "The infrastructure upgrade's progress per component (stage)",
			response: Progress{}, handler: s.handleInfraStatus},
		{method: "GET", path: infraBundlePath, access: act, summary: "The support bundle collected when the infrastructure upgrade ended (.tar.gz, redacted; infra/status lists it)",
			response: []byte{}, handler: s.handleInfraBundle, contentType: "application/gzip"},
		{method: "POST", path: "/api/linux/upgrade/airgap/process", access: act,
			summary:  "Process the airgap bundle (--airgap-bundle): verify every blob, then push each image and chart to --airgap-registry, in the background; before the infrastructure phase",
			response: Airgap{}, handler: s.handleAirgapProcess},
		{method: "GET", path: "/api/linux/upgrade/airgap/status", access: read, summary: "The airgap processing's progress and logs",
			response: Airgap{}, handler: s.handleAirgapStatus},
		{method: "POST", path: "/api/linux/upgrade/host-preflights/run", access: act, summary: "Run the host preflights: every node Ready, none under pressure, none cordoned",
			response: HostPreflights{}, handler: s.handleHostPreflightsRun},
		{method: "GET", path: "/api/linux/upgrade/host-preflights/status", access: read, summary: "The host preflights' results by severity",
			response: HostPreflights{}, handler: s.handleHostPreflightsStatus},
		{method: "POST", path: "/api/linux/upgrade/app-preflights/run", access: act, summary: "Run the app plan's preflight and health checks",
			response: AppPreflights{}, handler: s.handleAppPreflightsRun},
		{method: "GET", path: "/api/linux/upgrade/app-preflights/status", access: read, summary: "The app preflights' results by severity",
			response: AppPreflights{}, handler: s.handleAppPreflightsStatus},
		{method: "POST", path: "/api/linux/upgrade/app/upgrade", access: act, summary: "Start the app upgrade (the app plan's run)",
			request: AppUpgradeRequest{}, response: Progress{}, handler: s.handleAppUpgrade},
		{method: "GET", path: "/api/linux/upgrade/app/status", access: read, summary: "The app upgrade's progress", response: Progress{}, handler: s.handleAppStatus},

		{method: "GET", path: "/api/runs", access: read, summary: "Every run, newest first", response: struct {
			Items []RunSummary `json:"items"`
		}{}, handler: s.handleRunsList},
		{method: "GET", path: "/api/runs/{name}", access: read, summary: "A run, as kubectl shows it (redacted)", response: RunDetail{}, handler: s.handleRunGet},
		{method: "GET", path: "/api/runs/{name}/report", access: read, summary: "A run's report (JSON; ?format=markdown for Markdown)",
			response: report.Report{}, handler: s.handleRunReport},
		{method: "GET", path: "/api/runs/{name}/support-bundle", access: act, summary: "A support bundle of the run (.tar.gz): its record and report, events, objects and container logs of its namespaces, the nodes; redacted",
			response: []byte{}, handler: s.handleRunSupportBundle, contentType: "application/gzip"},
		{method: "GET", path: "/api/runs/{name}/preview", access: read, summary: "The preview a run was started on (runs the server started)",
			response: runner.PlanPreview{}, handler: s.handleRunPreview},
		{method: "GET", path: "/api/runs/{name}/events", access: read, summary: "Server-sent events: the run, then one event per saved transition",
			response: RunEvent{}, handler: s.handleRunEvents, contentType: "text/event-stream"},
		{method: "POST", path: "/api/runs/{name}/approve", access: act, summary: "Approve the approval step the run waits at (or the named one ahead)",
			request: ApproveRequest{}, response: RunSummary{}, handler: s.handleApprove},
		{method: "POST", path: "/api/runs/{name}/abort", access: act, summary: "Stop the run where it is; its backups stay", response: RunSummary{}, handler: s.handleAbort},
		{method: "POST", path: "/api/runs/{name}/rollback", access: act, summary: "Roll the run back, in the background", response: RunSummary{}, status: http.StatusAccepted, handler: s.handleRollback},
		{method: "POST", path: "/api/runs/{name}/retry", access: act, summary: "Retry the run, in the background", response: RunSummary{}, status: http.StatusAccepted, handler: s.handleRetry},
		{method: "POST", path: "/api/plans/preview", access: act, summary: "Validate, preflight and preview an uploaded plan (YAML or JSON); changes nothing",
			request: v1alpha1.UpgradePlan{}, response: PlanPreviewResult{}, contentType: "application/yaml", handler: s.handlePlanPreview},
	}, s.appRoutes()...)
}

// Handler serves the API under /api and the UI elsewhere.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.Handle(rt.method+" "+rt.path, s.guard(rt))
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &APIError{StatusCode: http.StatusNotFound, Message: "no route " + r.Method + " " + r.URL.Path + ": see /api/openapi.json"})
	})
	if s.cfg.UI != nil {
		mux.Handle("/", s.cfg.UI)
	}
	return securityHeaders(mux)
}

// guard checks the route's access before its handler.
func (s *Server) guard(rt route) http.Handler {
	if rt.access == open {
		return rt.handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="upshift"`)
			writeError(w, &APIError{StatusCode: http.StatusUnauthorized, Message: "no bearer token: log in (POST /api/auth/login) and send Authorization: Bearer <token>"})
			return
		}
		role, exp, err := s.verify(token)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="upshift", error="invalid_token"`)
			writeError(w, &APIError{StatusCode: http.StatusUnauthorized, Message: err.Error()})
			return
		}
		if rt.access == act && role != auth.Admin {
			writeError(w, &APIError{StatusCode: http.StatusForbidden, Message: "a " + string(role) + " token may read, not act: log in with the admin password"})
			return
		}
		ctx := context.WithValue(r.Context(), roleKey{}, role)
		ctx = context.WithValue(ctx, tokenKey{}, bearer{token: token, expires: exp})
		rt.handler(w, r.WithContext(ctx))
	})
}

// verify checks a token against the passwords in force now.
func (s *Server) verify(token string) (auth.Role, time.Time, error) {
	pw, err := s.cfg.Passwords.Current()
	if err != nil {
		s.cfg.Log("passwords: " + err.Error())
		return "", time.Time{}, auth.ErrInvalidToken
	}
	return s.cfg.Tokens.Verify(token, pw)
}

// roleKey is the context key of the caller's role; tokenKey of its
// bearer token, which a long response checks again (events.go).
type (
	roleKey  struct{}
	tokenKey struct{}
)

// bearer is the token a request came with and when it expires.
type bearer struct {
	token   string
	expires time.Time
}

// caller names who calls, for the records an action leaves (an
// approval's "by"): the role and the client's address.
func caller(r *http.Request) string {
	return fmt.Sprintf("%s@%s via upshift serve", role(r), clientHost(r))
}

// role is the caller's role ("" on an open route).
func role(r *http.Request) auth.Role {
	ro, _ := r.Context().Value(roleKey{}).(auth.Role)
	return ro
}

// clientHost is the client's address without its port.
func clientHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// securityHeaders are set on every answer: the UI loads nothing from
// elsewhere and is framed by nobody.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

func handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	var req LoginRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	refused, done := s.failedLogins.begin(clientHost(r))
	switch refused {
	case limitedHost:
		w.Header().Set("Retry-After", "10")
		writeError(w, &APIError{StatusCode: http.StatusTooManyRequests, Message: "too many failed logins from this address: try again in a few seconds"})
		return
	case limitedGlobal:
		w.Header().Set("Retry-After", "2") // not logged: a flood would fill the log
		writeError(w, &APIError{StatusCode: http.StatusTooManyRequests, Message: "too many failed logins from all addresses (someone may be guessing): try again in a few seconds"})
		return
	}
	pw, err := s.cfg.Passwords.Current()
	if err != nil {
		done(false)
		s.cfg.Log("passwords: " + err.Error())
		writeError(w, &APIError{StatusCode: http.StatusServiceUnavailable, Message: "the server cannot read its passwords: see its log"})
		return
	}
	role, err := pw.Check(req.Password)
	done(err != nil)
	if err != nil {
		s.cfg.Log("login refused from " + r.RemoteAddr)
		writeError(w, &APIError{StatusCode: http.StatusUnauthorized, Message: "wrong password"})
		return
	}
	token, exp, err := s.cfg.Tokens.Issue(role, pw)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, LoginResponse{Token: token, Role: string(role), ExpiresAt: exp})
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	rec, _, err := s.state.load(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	st := WizardState{State: rec.State, TargetVersion: rec.Request.TargetVersion, CurrentVersion: rec.Current,
		Catalog: rec.Request.Catalog, RequiresInfraUpgrade: len(rec.Infra) > 0, InfraRuns: []string{}, LastUpdated: rec.LastUpdated}
	if st.Catalog == "" {
		st.Catalog = s.cfg.Catalog
	}
	st.Catalog = redact.Text(st.Catalog)
	st.AppPlan, st.IsAirgap = s.appPlanName, s.bundle != nil
	for _, p := range rec.Infra {
		st.InfraRuns = append(st.InfraRuns, p.Run)
	}
	if len(rec.App) > 0 {
		st.AppRun = rec.App[0].Run
	}
	writeJSON(w, http.StatusOK, st)
}
