package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestServerKilledMidUpgradeDrivesOn: the server is killed (SIGKILL)
// while a hop waits for its approval; a new server on the same cluster
// reads the wizard's state, drives the hop on, and the approval through
// it completes the upgrade.
func TestServerKilledMidUpgradeDrivesOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	admin := s.login(adminPassword)
	s.startWaiting(admin)
	s.kill()

	s2 := e.serve("--catalog", catalog)
	var state struct {
		State     string   `json:"state"`
		InfraRuns []string `json:"infraRuns"`
	}
	s2.must(http.StatusOK, "GET", "/api/linux/upgrade/state", admin, nil, &state)
	if state.State != "InfrastructureUpgrading" || len(state.InfraRuns) != 1 {
		t.Fatalf("state after the restart: %+v", state)
	}
	p := s2.waitFor("/api/linux/upgrade/infra/status", admin, "the approval again", func(p progress) bool { return p.Waiting != nil })
	hop := p.Waiting.Run
	s2.must(http.StatusOK, "POST", "/api/runs/"+hop+"/approve", admin, map[string]string{}, nil)
	p = s2.waitFor("/api/linux/upgrade/infra/status", admin, "the end", func(p progress) bool { return p.Status.State != "Running" })
	if p.Status.State != "Succeeded" {
		t.Fatalf("after the restart: %+v\n%s", p.Status, s2.log)
	}
	if v := e.version(ns); v != "1.1.0" {
		t.Errorf("the platform runs %s, want 1.1.0", v)
	}

	// The operator rolls the hop back after all: the wizard does not
	// stay at "upgraded" over a hop that no longer stands.
	s2.must(http.StatusAccepted, "POST", "/api/runs/"+hop+"/rollback", admin, nil, nil)
	p = s2.waitFor("/api/linux/upgrade/infra/status", admin, "the wizard to see the rollback", func(p progress) bool { return p.Status.State == "Failed" })
	s2.must(http.StatusOK, "GET", "/api/linux/upgrade/state", admin, nil, &state)
	if state.State != "InfrastructureUpgradeFailed" || !strings.Contains(p.Status.Description, "rolled back") {
		t.Errorf("after rolling the hop back: state %s, status %+v", state.State, p.Status)
	}
	if code, _ := s2.call("POST", "/api/linux/upgrade/app-preflights/run", admin, map[string]any{}); code != http.StatusConflict {
		t.Errorf("app preflights over a rolled-back hop = %d, want 409", code)
	}
}
