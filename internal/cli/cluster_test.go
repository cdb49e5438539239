package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// run executes the CLI with args and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := NewRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// The lifecycle a user goes through: up, status, a refused second up, down,
// and a down that finds nothing.
func TestClusterUpStatusDown(t *testing.T) {
	testenv.SkipIfShort(t)
	root, err := os.MkdirTemp("", testenv.DirPrefix+"cli-")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(localcluster.EnvClustersDir, root)
	t.Cleanup(func() {
		_ = localcluster.Down("cli", nil) // in case an assertion failed midway
		_ = os.RemoveAll(root)
	})

	out, _, err := run(t, "cluster", "up", "--name", "cli", "--nodes", "2")
	if err != nil {
		t.Fatalf("up: %v", err)
	}
	st, err := localcluster.Get("cli")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubeconfig: " + st.Kubeconfig, "export KUBECONFIG=" + st.Kubeconfig, "upshift cluster down --name cli"} {
		if !strings.Contains(out, want) {
			t.Errorf("up output lacks %q:\n%s", want, out)
		}
	}
	if !st.Detached || len(st.Running()) != 5 {
		t.Fatalf("after up: detached=%t, running=%v; want a detached cluster with 5 processes", st.Detached, st.Running())
	}

	out, _, err = run(t, "cluster", "status")
	if err != nil || !strings.Contains(out, "cli") || !strings.Contains(out, "Running") {
		t.Fatalf("status = %q, %v; want cli Running", out, err)
	}
	out, _, err = run(t, "cluster", "status", "--name", "cli", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var states []localcluster.State
	if err := json.Unmarshal([]byte(out), &states); err != nil || len(states) != 1 || states[0].Server != st.Server {
		t.Fatalf("status -o json = %q (%v)", out, err)
	}

	_, _, err = run(t, "cluster", "up", "--name", "cli")
	if err == nil || !strings.Contains(err.Error(), "already running") || !strings.Contains(err.Error(), "upshift cluster down --name cli") {
		t.Fatalf("second up: %v; want a refusal naming `upshift cluster down`", err)
	}

	out, _, err = run(t, "cluster", "down", "--name", "cli")
	if err != nil || !strings.Contains(out, "stopped") {
		t.Fatalf("down = %q, %v", out, err)
	}
	for _, p := range st.Processes {
		if _, err := os.Stat("/proc/" + strconv.Itoa(p.PID) + "/cmdline"); err == nil {
			if b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline"); strings.Contains(string(b), st.Dir) {
				t.Errorf("%s (pid %d) still runs after down", p.Name, p.PID)
			}
		}
	}
	_, _, err = run(t, "cluster", "down", "--name", "cli")
	if err == nil || !strings.Contains(err.Error(), "no local cluster") {
		t.Fatalf("down of a removed cluster: %v; want 'no local cluster'", err)
	}
}

func TestVersionPrintsPinnedVersions(t *testing.T) {
	out, _, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, localcluster.KubernetesVersion) || !strings.HasPrefix(out, "upshift ") {
		t.Fatalf("version output: %q", out)
	}
}
