//go:build bench

// Package bench measures Upshift against the runbook script it replaces:
// the demo platform's 1.0.0 -> 1.1.0 upgrade on a fresh local cluster per
// run, alternating the two, timed from the API server's audit log. Run it
// with `make bench`; the figures go in docs/benchmarks.md.
package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

var (
	runs       = flag.Int("runs", 5, "runs of each tool")
	timeline   = flag.Bool("timeline", false, "log when each tool was neither waiting on a rollout nor done, and what it asked the API server then")
	readyDelay = flag.Duration("pod-ready-delay", 500*time.Millisecond, "kwok's pinned delay before a pod is Ready")
)

const (
	upshiftUser = "bench-upshift"
	scriptUser  = "bench-script"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// measured is one tool's run.
type measured struct {
	wall      time.Duration // audit span, approval wait excluded
	limit     time.Duration // the rollouts' own critical path
	reactions []time.Duration
	requests  int
}

func TestUpgradeVersusScript(t *testing.T) {
	root := repoRoot()
	bin := filepath.Join(t.TempDir(), "upshift")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "upshift")).CombinedOutput(); err != nil {
		t.Fatalf("build upshift: %v\n%s", err, out)
	}
	var ups, scr []measured
	for i := range *runs {
		// Alternate which goes first, so neither always meets a warmer machine.
		order := []string{"upshift", "script"}
		if i%2 == 1 {
			order = []string{"script", "upshift"}
		}
		for _, tool := range order {
			m := runOnce(t, root, bin, tool, i)
			t.Logf("run %d %-7s wall %s  limit %s  requests %d", i+1, tool, m.wall.Round(time.Millisecond), m.limit.Round(time.Millisecond), m.requests)
			if tool == "upshift" {
				ups = append(ups, m)
			} else {
				scr = append(scr, m)
			}
		}
	}
	report(t, ups, scr)
}

// runOnce starts a fresh cluster, installs 1.0.0 as the admin, and runs
// one tool's upgrade to 1.1.0 under its own client certificate.
func runOnce(t *testing.T, root, bin, tool string, i int) measured {
	t.Helper()
	c, err := testenv.StartTied(localcluster.Options{Name: fmt.Sprintf("bench-%s-%d", tool, i), PodReadyDelay: *readyDelay})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	defer c.Stop()
	demo := filepath.Join(root, "examples", "demo")
	adminEnv := append(os.Environ(), "KUBECONFIG="+c.KubeconfigPath())
	mustRun(t, adminEnv, bin, "apply", "-f", filepath.Join(demo, "1.0.0", "plan.yaml"), "-o", "json")

	user := upshiftUser
	if tool == "script" {
		user = scriptUser
	}
	kc, err := c.UserKubeconfig(user, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "KUBECONFIG="+kc)
	var windows []window
	timed := func(name string, args ...string) {
		start := time.Now()
		mustRunCode(t, env, exitWant(args), name, args...)
		windows = append(windows, window{user: user, start: start, end: time.Now()})
	}
	plan := filepath.Join(demo, "1.1.0", "plan.yaml")
	if tool == "upshift" {
		timed(bin, "apply", "-f", plan, "--no-wait", "-o", "json") // stops at the approval: exit 4
		mustRun(t, env, bin, "approve", "demo-1.1.0")
		timed(bin, "apply", "-f", plan, "-o", "json")
	} else {
		env = append(env, "KUBECTL="+c.Binaries().Path("kubectl"), "HELM="+c.Binaries().Path("helm"), "DEMO="+filepath.Join(demo, "1.1.0"))
		timed("bash", filepath.Join(root, "test", "bench", "upgrade-1.1.0.sh"))
	}
	time.Sleep(time.Second) // let the audit log's last batch reach the file
	events, err := c.ReadAudit()
	if err != nil {
		t.Fatal(err)
	}
	var m measured
	whole := window{user: user, start: windows[0].start, end: windows[len(windows)-1].end}
	for _, w := range windows {
		evs := w.events(events)
		m.wall += span(evs)
		m.requests += len(evs)
	}
	rs := rollouts(events, whole)
	m.limit = busy(rs)
	m.reactions = reactions(events, whole, rs)
	if *timeline {
		for i, r := range rs {
			if i < len(m.reactions) {
				t.Logf("%s rollout %s took %s, next write %s later", tool, r.object, r.end.Sub(r.start).Round(time.Millisecond), m.reactions[i].Round(time.Millisecond))
			}
		}
		for _, w := range windows {
			for _, g := range gaps(events, w, rs) {
				t.Logf("%s %s", tool, g)
			}
		}
	}
	return m
}

// exitWant is 4 for `apply --no-wait` (waiting for an approval), else 0.
func exitWant(args []string) int {
	for _, a := range args {
		if a == "--no-wait" {
			return 4
		}
	}
	return 0
}

func mustRun(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	mustRunCode(t, env, 0, name, args...)
}

func mustRunCode(t *testing.T, env []string, code int, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	if got != code {
		t.Fatalf("%s %s: exit %d, want %d (the run must reach its target)\n%s", name, strings.Join(args, " "), got, code, tail(out.String()))
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

func report(t *testing.T, ups, scr []measured) {
	pick := func(ms []measured, f func(measured) time.Duration) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, f(m))
		}
		return out
	}
	wall := func(m measured) time.Duration { return m.wall }
	limit := func(m measured) time.Duration { return m.limit }
	uw, sw := median(pick(ups, wall)), median(pick(scr, wall))
	ul := median(pick(ups, limit))
	var rx []time.Duration
	var ureq, sreq []time.Duration
	for _, m := range ups {
		rx = append(rx, m.reactions...)
		ureq = append(ureq, time.Duration(m.requests))
	}
	for _, m := range scr {
		sreq = append(sreq, time.Duration(m.requests))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| measure (median of %d runs, pod ready delay %s) | Upshift | script |\n|---|---|---|\n", len(ups), *readyDelay)
	fmt.Fprintf(&b, "| wall time (audit log) | %s | %s |\n", uw.Round(time.Millisecond), sw.Round(time.Millisecond))
	fmt.Fprintf(&b, "| physical limit (rollouts' critical path) | %s | %s |\n", ul.Round(time.Millisecond), median(pick(scr, limit)).Round(time.Millisecond))
	fmt.Fprintf(&b, "| API requests per run | %d | %d |\n", int64(median(ureq)), int64(median(sreq)))
	fmt.Fprintf(&b, "\nUpshift ÷ script: %.2f; Upshift ÷ physical limit: %.2f\n", uw.Seconds()/sw.Seconds(), uw.Seconds()/ul.Seconds())
	fmt.Fprintf(&b, "reaction from a rollout done to Upshift's next write: p50 %s, p99 %s (%d rollouts)\n",
		percentile(rx, 0.5).Round(time.Millisecond), percentile(rx, 0.99).Round(time.Millisecond), len(rx))
	t.Log(b.String())
}
