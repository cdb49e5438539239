//go:build bench

// Package bench measures Upshift against the runbook scripts it
// replaces: each scenario's upgrade (the demo platform's 1.0.0 -> 1.1.0,
// a Liqo-shaped platform's v1.0.0 -> v1.1.0) on a fresh local cluster per
// run, alternating the two tools, timed and weighed from the API
// server's audit log. Run it with `make bench`; the figures go in
// docs/benchmarks.md.
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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

var (
	runs       = flag.Int("runs", 5, "runs of each tool, per scenario")
	only       = flag.String("scenario", "all", "the upgrade to measure: demo, liqo or all")
	timeline   = flag.Bool("timeline", false, "log when each tool was neither waiting on a rollout nor done, and what it asked the API server then")
	requestLog = flag.Bool("requests", false, "log every request of each tool's timed commands, in order, with its URI and how long the API server took")
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
	asked     asked
	written   written
}

func TestUpgradeVersusScript(t *testing.T) {
	root := repoRoot()
	var chosen []scenario
	for _, sc := range scenarios(root) {
		if *only == "all" || *only == sc.name {
			chosen = append(chosen, sc)
		}
	}
	if len(chosen) == 0 {
		t.Fatalf("-scenario=%s: choose demo, liqo or all", *only)
	}
	bin := buildUpshift(t, root)
	for _, sc := range chosen {
		t.Run(sc.name, func(t *testing.T) {
			var ups, scr []measured
			for i := range *runs {
				// Alternate which goes first, so neither always meets a warmer machine.
				order := []string{"upshift", "script"}
				if i%2 == 1 {
					order = []string{"script", "upshift"}
				}
				for _, tool := range order {
					m := runOnce(t, root, bin, sc, tool, i)
					t.Logf("run %d %-7s wall %s  limit %s  requests %d  written %s", i+1, tool, m.wall.Round(time.Millisecond), m.limit.Round(time.Millisecond), m.requests, size(m.written.bytes))
					if tool == "upshift" {
						ups = append(ups, m)
					} else {
						scr = append(scr, m)
					}
				}
			}
			report(t, sc, ups, scr)
		})
	}
}

// runOnce starts a fresh cluster, installs the start version as the
// admin, and runs one tool's upgrade under its own client certificate,
// whose writes the audit log records with their bodies.
func runOnce(t *testing.T, root, bin string, sc scenario, tool string, i int) measured {
	t.Helper()
	c, err := testenv.StartTied(localcluster.Options{
		Name:                 fmt.Sprintf("bench-%s-%s-%d", sc.name, tool, i),
		PodReadyDelay:        *readyDelay,
		AuditRequestBodiesOf: []string{upshiftUser, scriptUser},
	})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	defer c.Stop()
	adminEnv := append(os.Environ(), "KUBECONFIG="+c.KubeconfigPath())
	mustRun(t, adminEnv, bin, "apply", "-f", sc.install, "-o", "json")

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
	timed := func(code int, name string, args ...string) {
		start := time.Now()
		mustRunCode(t, env, code, name, args...)
		windows = append(windows, window{user: user, start: start, end: time.Now()})
	}
	if tool == "upshift" {
		for _, cmd := range sc.upshift {
			if cmd.timed {
				timed(cmd.exit, bin, cmd.args...)
			} else {
				mustRunCode(t, env, cmd.exit, bin, cmd.args...)
			}
		}
	} else {
		env = append(env, "KUBECTL="+c.Binaries().Path("kubectl"), "HELM="+c.Binaries().Path("helm"))
		env = append(env, sc.scriptEnv...)
		timed(0, "bash", sc.script)
	}
	if err := sc.target.reached(c.RESTConfig()); err != nil {
		t.Fatalf("%s did not reach the target: %v", tool, err)
	}
	time.Sleep(time.Second) // let the audit log's last batch reach the file
	events, err := c.ReadAudit()
	if err != nil {
		t.Fatal(err)
	}
	var m measured
	whole := window{user: user, start: windows[0].start, end: windows[len(windows)-1].end}
	var timedEvents []localcluster.AuditEvent
	for _, w := range windows {
		evs := w.events(events)
		m.wall += span(evs)
		m.requests += len(evs)
		timedEvents = append(timedEvents, evs...)
	}
	m.written = weigh(timedEvents, sc.plan)
	m.asked = count(timedEvents)
	rs := rollouts(events, whole)
	m.limit = busy(rs)
	m.reactions = reactions(events, whole, rs)
	if *timeline {
		i := 0
		for _, r := range rs {
			if !r.controlled {
				continue
			}
			if i < len(m.reactions) {
				t.Logf("%s rollout %s took %s, next write %s later", tool, r.object, r.end.Sub(r.start).Round(time.Millisecond), m.reactions[i].Round(time.Millisecond))
			}
			i++
		}
		for _, w := range windows {
			for _, g := range gaps(events, w, rs) {
				t.Logf("%s %s", tool, g)
			}
		}
	}
	if *requestLog {
		for i, w := range windows {
			evs := w.events(events)
			slices.SortFunc(evs, func(a, b localcluster.AuditEvent) int {
				return a.RequestReceivedTimestamp.Compare(b.RequestReceivedTimestamp)
			})
			for _, e := range evs {
				t.Logf("%s cmd %d +%s %s %s (%s)", tool, i+1, e.RequestReceivedTimestamp.Sub(w.start).Round(time.Millisecond), e.Verb, e.RequestURI, e.StageTimestamp.Sub(e.RequestReceivedTimestamp).Round(time.Millisecond))
			}
		}
	}
	return m
}

// buildUpshift builds the CLI from the work tree into a temporary dir.
func buildUpshift(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "upshift")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "upshift")).CombinedOutput(); err != nil {
		t.Fatalf("build upshift: %v\n%s", err, out)
	}
	return bin
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

func report(t *testing.T, sc scenario, ups, scr []measured) {
	pick := func(ms []measured, f func(measured) time.Duration) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, f(m))
		}
		return out
	}
	wall := func(m measured) time.Duration { return m.wall }
	limit := func(m measured) time.Duration { return m.limit }
	requests := func(m measured) time.Duration { return time.Duration(m.requests) }
	bytesOf := func(m measured) time.Duration { return time.Duration(m.written.bytes) }
	uw, sw := median(pick(ups, wall)), median(pick(scr, wall))
	ul := median(pick(ups, limit))
	var rx []time.Duration
	for _, m := range ups {
		rx = append(rx, m.reactions...)
	}
	ur, sr := median(pick(ups, requests)), median(pick(scr, requests))
	rec := medianRun(ups, bytesOf).written.record
	var b strings.Builder
	fmt.Fprintf(&b, "\nscenario %s\n| measure (median of %d runs, pod ready delay %s) | Upshift | script |\n|---|---|---|\n", sc.name, len(ups), *readyDelay)
	fmt.Fprintf(&b, "| wall time (audit log) | %s | %s |\n", uw.Round(time.Millisecond), sw.Round(time.Millisecond))
	fmt.Fprintf(&b, "| physical limit (rollouts' critical path) | %s | %s |\n", ul.Round(time.Millisecond), median(pick(scr, limit)).Round(time.Millisecond))
	fmt.Fprintf(&b, "| API requests per run | %d | %d |\n", int64(ur), int64(sr))
	fmt.Fprintf(&b, "| bytes written to the API per run (request bodies) | %s | %s |\n", size(int(median(pick(ups, bytesOf)))), size(int(median(pick(scr, bytesOf)))))
	if rec.writes > 0 {
		fmt.Fprintf(&b, "| run record: saves per run, bytes per save (mean / largest) | %d, %s / %s | — |\n", rec.writes, size(rec.bytes/rec.writes), size(rec.max))
		var took []time.Duration
		for _, m := range ups {
			took = append(took, m.written.recordTook...)
		}
		fmt.Fprintf(&b, "| run record: API server time per save (p50 / p90, every run) | %s / %s | — |\n", median(took).Round(10*time.Microsecond), percentile(took, 0.9).Round(10*time.Microsecond))
	}
	fmt.Fprintf(&b, "\nUpshift ÷ script: wall %.2f, requests %.2f\n", uw.Seconds()/sw.Seconds(), float64(ur)/float64(sr))
	fmt.Fprintf(&b, "Upshift ÷ physical limit: %.3f, the median of each run's wall ÷ its own limit (runs: %s); median wall ÷ median limit: %.3f\n",
		medianOverLimit(ups), overLimits(ups), uw.Seconds()/ul.Seconds())
	fmt.Fprintf(&b, "reaction from a rollout done to Upshift's next write: p50 %s, p99 %s (%d rollouts)\n",
		percentile(rx, 0.5).Round(time.Millisecond), percentile(rx, 0.99).Round(time.Millisecond), len(rx))
	fmt.Fprintf(&b, "\nbytes written by what, Upshift's median run:\n%s", medianRun(ups, bytesOf).written.breakdown())
	fmt.Fprintf(&b, "bytes written by what, the script's median run:\n%s", medianRun(scr, bytesOf).written.breakdown())
	fmt.Fprintf(&b, "\nrequests by verb and resource, Upshift's median run:\n%s", medianRun(ups, requests).asked.breakdown())
	fmt.Fprintf(&b, "requests by verb and resource, the script's median run:\n%s", medianRun(scr, requests).asked.breakdown())
	t.Log(b.String())
}

// overLimit is a run's wall time over its own physical limit: the
// overhead against a baseline measured in the same run, on the same
// cluster. The limits of runs on fresh clusters spread by about as much
// as the overhead itself (5.86–6.12 s on liqo in one bench), so a wall
// time is compared with its own run's limit, not another run's.
func (m measured) overLimit() float64 { return m.wall.Seconds() / m.limit.Seconds() }

// medianOverLimit is the median of the runs' overLimit.
func medianOverLimit(ms []measured) float64 {
	rs := make([]float64, 0, len(ms))
	for _, m := range ms {
		rs = append(rs, m.overLimit())
	}
	slices.Sort(rs)
	return rs[int(float64(len(rs)-1)*0.5+0.5)]
}

// overLimits lists the runs' overLimit in the order they ran.
func overLimits(ms []measured) string {
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%.3f", m.overLimit()))
	}
	return strings.Join(parts, ", ")
}

// medianRun is the run whose figure is the median.
func medianRun(ms []measured, f func(measured) time.Duration) measured {
	s := slices.Clone(ms)
	slices.SortFunc(s, func(a, b measured) int { return int(f(a) - f(b)) })
	return s[int(float64(len(s)-1)*0.5+0.5)]
}
