package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestFailedHopRollsBackAndRetries: a hop whose controller crash-loops
// fails its gate, is rolled back and its restore verified; the status
// says so per component and overall, the wizard refuses the app phase,
// and a retry of the run through the API starts the hop again (attempt
// 2), which fails the same way.
func TestFailedHopRollsBackAndRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	admin := s.login(adminPassword)
	req := map[string]any{"targetVersion": "1.1.0", "values": map[string]string{"broken": "1.1.0"}}
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/infra/upgrade", admin, req, nil)
	p := s.waitFor("/api/linux/upgrade/infra/status", admin, "the hop's end", func(p progress) bool { return p.Status.State != "Running" })
	if p.Status.State != "Failed" || !strings.Contains(p.Status.Description, "rolled back, restore verified") {
		t.Fatalf("status after the failed hop: %+v", p.Status)
	}
	if len(p.Components) == 0 || p.Components[0].Name != "controller" || p.Components[0].Status.State != "Failed" ||
		!strings.Contains(p.Components[0].Status.Description, "Rolled back") {
		t.Errorf("components: %+v", p.Components)
	}
	if !strings.Contains(p.Logs, "[controller]") {
		t.Errorf("logs: %q", p.Logs)
	}
	run := ns + "-1.1.0"
	var detail struct {
		Summary struct {
			Phase   string `json:"phase"`
			Attempt int    `json:"attempt"`
			Failure string `json:"failure"`
		} `json:"summary"`
	}
	s.must(http.StatusOK, "GET", "/api/runs/"+run, admin, nil, &detail)
	if detail.Summary.Phase != "RolledBack" || detail.Summary.Failure == "" {
		t.Errorf("run %s: %+v", run, detail.Summary)
	}
	if v := e.version(ns); v != "1.0.0" {
		t.Errorf("the platform runs %s after the rollback, want 1.0.0", v)
	}
	var ae apiError
	s.must(http.StatusConflict, "POST", "/api/linux/upgrade/app-preflights/run", admin, map[string]any{}, &ae)
	if !strings.Contains(ae.Message, "start the infrastructure upgrade again") {
		t.Errorf("app preflights after a failed infrastructure: %+v", ae)
	}

	s.must(http.StatusAccepted, "POST", "/api/runs/"+run+"/retry", admin, nil, nil)
	s.waitFor("/api/linux/upgrade/infra/status", admin, "the retry's end", func(p progress) bool {
		s.must(http.StatusOK, "GET", "/api/runs/"+run, admin, nil, &detail)
		return p.Status.State == "Failed" && detail.Summary.Attempt == 2 && detail.Summary.Phase == "RolledBack"
	})
}
