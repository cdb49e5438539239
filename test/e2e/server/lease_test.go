package server_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cliPlan waits for an approval: the CLI applying it holds the cluster's
// lease while it waits.
const cliPlan = `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: NS-cli}
spec:
  version: "0.0.1"
  stages:
  - name: wait
    steps:
    - name: hold
      approval: {message: "held by the CLI"}
`

// TestCLIAndAPINeverDriveAtOnce: while `upshift apply` drives a run on
// the cluster (waiting at its approval, holding the lease), a start
// through the API is refused with 409 naming the holder, before anything
// is written.
func TestCLIAndAPINeverDriveAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	planFile := filepath.Join(t.TempDir(), "plan.yaml")
	write(t, planFile, strings.ReplaceAll(cliPlan, "NS", ns))
	cli := exec.Command(e.bin, "apply", "-f", planFile, "--wait", "--runs-namespace", e.runsNS)
	cli.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig)
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Process.Signal(syscall.SIGKILL); _ = cli.Wait() })

	s := e.serve("--catalog", catalog)
	admin := s.login(adminPassword)
	deadline := time.Now().Add(time.Minute)
	for {
		var run struct {
			Summary struct {
				Waiting *struct{ Step string } `json:"waiting"`
			} `json:"summary"`
		}
		code, _ := s.call("GET", "/api/runs/"+ns+"-cli", admin, nil)
		if code == http.StatusOK {
			s.must(http.StatusOK, "GET", "/api/runs/"+ns+"-cli", admin, nil, &run)
			if run.Summary.Waiting != nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the CLI's run never waited at its approval")
		}
		time.Sleep(300 * time.Millisecond)
	}
	var ae apiError
	s.must(http.StatusConflict, "POST", "/api/linux/upgrade/infra/upgrade", admin, map[string]any{"targetVersion": "1.1.0"}, &ae)
	if !strings.Contains(ae.Message, "lease is held by") {
		t.Errorf("a start while the CLI drives: %+v", ae)
	}
	var state struct{ State string }
	s.must(http.StatusOK, "GET", "/api/linux/upgrade/state", admin, nil, &state)
	if state.State != "New" {
		t.Errorf("the refused start moved the wizard to %s", state.State)
	}
	s.must(http.StatusNotFound, "GET", "/api/runs/"+ns+"-cli/preview", admin, nil, &ae)
	if !strings.Contains(ae.Message, "no preview was kept") {
		t.Errorf("the preview of a CLI's run: %+v", ae)
	}
	if v := e.version(ns); v != "1.0.0" {
		t.Errorf("the platform runs %s, want 1.0.0", v)
	}
}
