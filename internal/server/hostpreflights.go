package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/server/wizard"
)

// HostPreflights answers the host preflight routes (embedded-cluster's
// types.HostPreflights).
type HostPreflights struct {
	// Titles are the results' titles, failures first.
	Titles                    []string        `json:"titles"`
	Output                    PreflightOutput `json:"output"`
	Status                    Status          `json:"status"`
	AllowIgnoreHostPreflights bool            `json:"allowIgnoreHostPreflights"`
}

// handleHostPreflightsRun runs the host preflights (hostChecks) and
// records their results: HostPreflightsSucceeded, or HostPreflightsFailed
// when a strict one fails. They read the nodes once, so they answer at
// once.
func (s *Server) handleHostPreflightsRun(w http.ResponseWriter, r *http.Request) {
	// Embedded-cluster's web UI sends {"isUi": true}; nothing else is read.
	var body struct {
		IsUI bool `json:"isUi"`
	}
	if err := decode(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if _, err := s.transition(r.Context(), wizard.HostPreflightsRunning, func(rec *record) error {
		if err := s.airgapGate(rec); err != nil {
			return err
		}
		rec.HostPreflights = &HostPreflights{Status: Status{State: StateRunning, Description: "Running host preflights", LastUpdated: time.Now().UTC()}}
		return nil
	}); err != nil {
		writeError(w, err)
		return
	}
	out, err := s.runHostChecks(r.Context())
	to, st := wizard.HostPreflightsSucceeded, Status{State: StateSucceeded, Description: "Host preflights succeeded"}
	switch {
	case err != nil:
		// The checks could not run: failed, to run again.
		to, st = wizard.HostPreflightsFailed, Status{State: StateFailed, Description: "Host preflights could not run: " + err.Error()}
	case len(out.Fail) > 0:
		to, st = wizard.HostPreflightsFailed, Status{State: StateFailed, Description: "Host preflights failed: " + failedTitles(out)}
	}
	st.LastUpdated = time.Now().UTC()
	rec, err := s.transition(r.Context(), to, func(rec *record) error {
		rec.HostPreflights = &HostPreflights{Output: out, Status: st}
		return nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.hostPreflights(rec))
}

func (s *Server) handleHostPreflightsStatus(w http.ResponseWriter, r *http.Request) {
	rec, _, err := s.state.load(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.hostPreflights(rec))
}

// hostPreflights is the record's results, Pending before any, every array
// [] as embedded-cluster's client reads them.
func (s *Server) hostPreflights(rec *record) HostPreflights {
	out := HostPreflights{Status: Status{State: StatePending, Description: "Host preflights have not run", LastUpdated: rec.LastUpdated}}
	if rec.HostPreflights != nil {
		out = *rec.HostPreflights
	}
	out.Titles = out.Output.normalize()
	out.AllowIgnoreHostPreflights = s.cfg.AllowIgnoreHostPreflights
	return out
}

// runHostChecks reads the nodes and judges them; nodes the server may not
// read are a strict failure (bypassable as any other), not an error.
func (s *Server) runHostChecks(ctx context.Context) (PreflightOutput, error) {
	nodes, err := s.deps.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return PreflightOutput{}, ctx.Err()
		}
		return PreflightOutput{Pass: []PreflightResult{}, Warn: []PreflightResult{}, Fail: []PreflightResult{{
			Title: "Nodes", Message: redact.Text(fmt.Sprintf("cannot read the nodes: %v", err)), Strict: true}}}, nil
	}
	return hostChecks(nodes.Items), nil
}

func failedTitles(o PreflightOutput) string {
	var parts []string
	for _, f := range o.Fail {
		parts = append(parts, f.Title+": "+f.Message)
	}
	return strings.Join(parts, "; ")
}

// hostGate is the start's own run of the host preflights, as
// embedded-cluster's start checks them: failures answer 400 ("preflight
// checks failed") unless the request ignores them and the server allows
// it. A wizard at HostPreflightsFailed that bypasses them moves to
// HostPreflightsFailedBypassed first; the state after is returned.
func (s *Server) hostGate(ctx context.Context, req UpgradeRequest, state wizard.State) (wizard.State, error) {
	out, err := s.runHostChecks(ctx)
	if err != nil {
		return state, err
	}
	if len(out.Fail) == 0 {
		return state, nil
	}
	if !req.IgnoreHostPreflights || !s.cfg.AllowIgnoreHostPreflights {
		msg := "preflight checks failed: " + failedTitles(out) + ": fix them (POST /api/linux/upgrade/host-preflights/run shows them)"
		if req.IgnoreHostPreflights {
			msg += "; ignoreHostPreflights is not allowed on this server (--allow-ignore-host-preflights)"
		}
		return state, &APIError{StatusCode: http.StatusBadRequest, Field: "ignoreHostPreflights", Message: msg}
	}
	if state != wizard.HostPreflightsFailed {
		return state, nil
	}
	if _, err := s.transition(ctx, wizard.HostPreflightsFailedBypassed, nil); err != nil {
		return state, err
	}
	return wizard.HostPreflightsFailedBypassed, nil
}
