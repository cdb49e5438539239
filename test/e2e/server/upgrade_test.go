package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkResult is the part of infra check the tests read.
type checkResult struct {
	RequiresInfraUpgrade bool   `json:"requiresInfraUpgrade"`
	CurrentVersion       string `json:"currentVersion"`
	TargetVersion        string `json:"targetVersion"`
	Hops                 []struct {
		From, To, Plan string
		Stages         []string
		Preview        *struct {
			Stages []struct {
				Steps []struct {
					Changes []struct {
						Action string `json:"action"`
					} `json:"changes"`
				} `json:"steps"`
			} `json:"stages"`
		} `json:"preview"`
	} `json:"hops"`
}

// TestWizardUpgradeEndToEnd walks the wizard as the UI does: a check, a
// two-hop infrastructure upgrade whose hops wait for approvals (approved
// through the API, followed over SSE), the app preflights by severity
// and the app upgrade; invalid transitions, a concurrent start and bad
// input are refused with the right codes before anything changes.
func TestWizardUpgradeEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, app := e.platform()
	s := e.serve("--catalog", catalog, "--app-plan", app)
	admin := s.login(adminPassword)

	var state struct {
		State string `json:"state"`
	}
	s.must(http.StatusOK, "GET", "/api/linux/upgrade/state", admin, nil, &state)
	if state.State != "New" {
		t.Fatalf("state %q, want New", state.State)
	}
	var ae apiError
	s.must(http.StatusConflict, "POST", "/api/linux/upgrade/app/upgrade", admin, map[string]any{}, &ae)
	if ae.StatusCode != 409 || !strings.Contains(ae.Message, "start an infrastructure upgrade first") {
		t.Errorf("app upgrade before the infrastructure: %+v", ae)
	}
	for _, tc := range []struct {
		body  any
		field string
	}{
		{map[string]any{"targetVersion": "one"}, "targetVersion"},
		{map[string]any{"targetVersion": "1.2.0", "catalog": "/etc"}, "catalog"},
		{map[string]any{"target": "1.2.0"}, "target"},
		{map[string]any{"targetVersion": "1.2.0", "values": map[string]string{"brokn": "x"}}, "values.brokn"},
		{map[string]any{"targetVersion": "9.9.9"}, "targetVersion"},
	} {
		var bad apiError
		s.must(http.StatusBadRequest, "POST", "/api/linux/upgrade/infra/check", admin, tc.body, &bad)
		if bad.Field != tc.field || bad.Message == "" {
			t.Errorf("check %v: %+v, want field %s", tc.body, bad, tc.field)
		}
	}

	var check checkResult
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/infra/check", admin, map[string]any{"targetVersion": "1.2.0"}, &check)
	if !check.RequiresInfraUpgrade || check.CurrentVersion != "1.0.0" || len(check.Hops) != 2 || check.Hops[0].To != "1.1.0" || check.Hops[1].To != "1.2.0" {
		t.Fatalf("check: %+v", check)
	}
	if p := check.Hops[0].Preview; p == nil || len(p.Stages) == 0 || len(p.Stages[0].Steps[0].Changes) == 0 || p.Stages[0].Steps[0].Changes[0].Action != "create" {
		t.Errorf("hop 1's preview does not show the controller created: %+v", check.Hops[0].Preview)
	}

	req := map[string]any{"targetVersion": "1.2.0", "values": map[string]string{"approve": "true"}}
	var started progress
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/infra/upgrade", admin, req, &started)
	if started.Status.State != "Running" || len(started.Runs) != 2 {
		t.Fatalf("start: %+v", started)
	}
	s.must(http.StatusConflict, "POST", "/api/linux/upgrade/infra/start", admin, req, &ae)
	if !strings.Contains(ae.Message, "an infrastructure upgrade is running") {
		t.Errorf("a concurrent start: %+v", ae)
	}

	// Hop 1 over SSE: it waits for its approval, is approved through the
	// API, and succeeds; its events come in order.
	hop1 := ns + "-1.1.0"
	s.waitFor("/api/linux/upgrade/infra/status", admin, "hop 1's run", func(p progress) bool {
		code, _ := s.call("GET", "/api/runs/"+hop1, admin, nil)
		return code == http.StatusOK
	})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	events := s.stream(ctx, hop1, admin)
	until(t, events, "hop 1 waiting for approval", func(ev runEvent) bool { return ev.data.Summary.Waiting != nil })
	p := s.waitFor("/api/linux/upgrade/infra/status", admin, "the wait", func(p progress) bool { return p.Waiting != nil })
	if p.Waiting.Run != hop1 || p.Waiting.Step != "go-ahead" || !strings.Contains(p.Status.Description, "Waiting for approval") {
		t.Errorf("status while waiting: %+v", p)
	}
	s.must(http.StatusOK, "POST", "/api/runs/"+hop1+"/approve", admin, map[string]string{}, nil)
	seen := until(t, events, "hop 1 succeeded", func(ev runEvent) bool { return ev.data.Summary.Phase == "Succeeded" })
	if len(seen) < 2 {
		t.Errorf("only %d events after the approval", len(seen))
	}
	var detail struct {
		Run struct {
			Status struct {
				Approvals []struct{ Step, By string } `json:"approvals"`
			} `json:"status"`
		} `json:"run"`
	}
	s.must(http.StatusOK, "GET", "/api/runs/"+hop1, admin, nil, &detail)
	if a := detail.Run.Status.Approvals; len(a) != 1 || a[0].Step != "go-ahead" || a[0].By != "admin@127.0.0.1 via upshift serve" {
		t.Errorf("hop 1's approvals: %+v", a)
	}

	// Hop 2 waits too.
	p = s.waitFor("/api/linux/upgrade/infra/status", admin, "hop 2's approval", func(p progress) bool {
		return p.Waiting != nil && p.Waiting.Run == ns+"-1.2.0"
	})
	s.must(http.StatusOK, "POST", "/api/runs/"+ns+"-1.2.0/approve", admin, map[string]string{"step": "go-ahead"}, nil)
	p = s.waitFor("/api/linux/upgrade/infra/status", admin, "the infrastructure upgraded", func(p progress) bool { return p.Status.State != "Running" })
	if p.Status.State != "Succeeded" || len(p.Components) != 6 || !strings.Contains(p.Logs, "[controller]") {
		t.Fatalf("infra status: %+v", p)
	}
	for _, c := range p.Components {
		if c.Status.State != "Succeeded" || !strings.HasPrefix(c.Name, "1.") {
			t.Errorf("component %s: %+v", c.Name, c.Status)
		}
	}
	if v := e.version(ns); v != "1.2.0" {
		t.Fatalf("the platform runs %s, want 1.2.0", v)
	}

	// App preflights: the warning check fails and warns, the rest pass.
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/app-preflights/run", admin, map[string]any{}, nil)
	var pre struct {
		Output struct {
			Pass, Warn, Fail []struct{ Title, Message string }
		} `json:"output"`
		Status struct{ State string } `json:"status"`
	}
	deadline := time.Now().Add(2 * time.Minute)
	for pre.Status.State != "Succeeded" && pre.Status.State != "Failed" && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		s.must(http.StatusOK, "GET", "/api/linux/upgrade/app-preflights/status", admin, nil, &pre)
	}
	if pre.Status.State != "Succeeded" || len(pre.Output.Warn) != 1 || len(pre.Output.Fail) != 0 || len(pre.Output.Pass) < 2 {
		t.Fatalf("app preflights: %+v", pre)
	}
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/app/upgrade", admin, map[string]any{}, nil)
	p = s.waitFor("/api/linux/upgrade/app/status", admin, "the app upgraded", func(p progress) bool { return p.Status.State != "Running" })
	if p.Status.State != "Succeeded" || len(p.Runs) != 1 {
		t.Fatalf("app status: %+v", p)
	}
	if _, err := e.cs.CoreV1().ConfigMaps(ns).Get(e.ctx, "web-app", metaGet); err != nil {
		t.Errorf("the app plan's ConfigMap: %v", err)
	}
	s.must(http.StatusOK, "GET", "/api/linux/upgrade/state", admin, nil, &state)
	if state.State != "Succeeded" {
		t.Errorf("state %q, want Succeeded", state.State)
	}

	// The runs list and a report.
	var runs struct {
		Items []struct{ Name, Phase string } `json:"items"`
	}
	s.must(http.StatusOK, "GET", "/api/runs", admin, nil, &runs)
	if len(runs.Items) != 3 {
		t.Errorf("runs: %+v", runs.Items)
	}
	code, md := s.call("GET", "/api/runs/"+ns+"-1.2.0/report?format=markdown", admin, nil)
	if code != http.StatusOK || !strings.Contains(string(md), "1.2.0") {
		t.Errorf("report: %d %s", code, md)
	}
	var kept struct {
		Plan   string `json:"plan"`
		Stages []struct {
			Name  string `json:"name"`
			Steps []struct {
				Changes []struct {
					Action string `json:"action"`
				} `json:"changes"`
			} `json:"steps"`
		} `json:"stages"`
	}
	s.must(http.StatusOK, "GET", "/api/runs/"+hop1+"/preview", admin, nil, &kept)
	if kept.Plan != hop1 || len(kept.Stages) != 3 || kept.Stages[0].Steps[0].Changes[0].Action != "create" {
		t.Errorf("the preview kept for %s: %+v", hop1, kept)
	}
	var rep map[string]any
	s.must(http.StatusOK, "GET", "/api/runs/"+ns+"-1.2.0/report", admin, nil, &rep)
	if rep["from"] != "1.1.0" {
		t.Errorf("the report's from is %v, want 1.1.0", rep["from"])
	}
}
