package report

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// An upgrade to 1.3.0 in three hops, the second rolled back: the report
// goes from the first hop's version to the target asked for, reached the
// first hop's, stands at hop 2 of 3 with hop 2's way on, lists hop 3 as
// not run, and spans the two hops' times.
func TestBuildUpgradeForStoppedAtAHop(t *testing.T) {
	hop1 := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, nil)
	hop2 := drive(t, platformPlan("platform-1.2.0", "1.2.0"), "1.1.0", epoch.Add(time.Hour), script{healthGate: healthFailure})
	u := BuildUpgradeFor(to130, hop1, hop2)
	if u.From != "1.0.0" || u.To != "1.3.0" || !u.Planned || u.Reached != "1.1.0" || u.Phase != v1alpha1.RunRolledBack || u.At != 2 {
		t.Errorf("from %s to %s planned %v reached %s phase %s at %d", u.From, u.To, u.Planned, u.Reached, u.Phase, u.At)
	}
	mustContain(t, "summary", u.Summary, "hop 2 of 3", "platform-1.2.0", "rolled back", "the cluster is at version 1.1.0")
	if len(u.Hops) != 2 || u.Hops[0].Name != "platform-1.1.0" || u.Hops[1].Phase != v1alpha1.RunRolledBack {
		t.Fatalf("hops: %+v", u.Hops)
	}
	if want := []HopNotRun{{Hop: 3, From: "1.2.0", To: "1.3.0"}}; !reflect.DeepEqual(u.NotRun, want) {
		t.Errorf("not run: %+v, want %+v", u.NotRun, want)
	}
	if kinds(u.Next) != string(NewAttempt) || u.Next[0].Run != "platform-1.2.0" {
		t.Errorf("next: %+v, want hop 2's", u.Next)
	}
	if want := hop2.Status.FinishedAt.Sub(hop1.Status.StartedAt.Time); u.Duration == nil || u.Duration.Duration != want || !u.Started.Equal(hop1.Status.StartedAt.Time) {
		t.Errorf("started %v took %v, want from hop 1's start to hop 2's end (%s)", u.Started, u.Duration, want)
	}
	if len(u.Warnings) != 0 {
		t.Errorf("warnings: %q", u.Warnings)
	}
	md := UpgradeMarkdown(u, command)
	mustContain(t, "Markdown", md, "# Upgrade report: 1.0.0 → 1.3.0", "- **To:** 1.3.0\n", "- **Hops:** 3 (2 run, 1 not run)",
		"| 3 |  | 1.2.0 | 1.3.0 | not run |", "## Hop 3: not run (1.2.0 → 1.3.0)")
	golden(t, "upgrade-stopped.md", md)
	var j map[string]any
	b, _ := json.Marshal(u)
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%v %v %v", j["to"], j["path"], j["notRun"]); got != "1.3.0 [1.1.0 1.2.0 1.3.0] [map[from:1.2.0 hop:3 to:1.3.0]]" {
		t.Errorf("JSON to, path and notRun: %s", got)
	}
}

// to130 is an upgrade from 1.0.0 asked to reach 1.3.0, solved in three
// hops.
var to130 = Request{From: "1.0.0", Target: "1.3.0", Path: []string{"1.1.0", "1.2.0", "1.3.0"}}

// The same runs named to `upshift report`: their records keep neither the
// target nor the path, so the report goes as far as the hops named and
// says the target is the last hop's.
func TestBuildUpgradeFromRunsAlone(t *testing.T) {
	hop1 := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, nil)
	hop2 := drive(t, platformPlan("platform-1.2.0", "1.2.0"), "1.1.0", epoch.Add(time.Hour), script{healthGate: healthFailure})
	u := BuildUpgrade(hop1, hop2)
	if u.To != "1.2.0" || u.Planned || u.At != 2 || len(u.NotRun) != 0 || strings.Join(u.Path, " ") != "1.1.0 1.2.0" {
		t.Errorf("to %s planned %v at %d not run %+v path %q", u.To, u.Planned, u.At, u.NotRun, u.Path)
	}
	mustContain(t, "summary", u.Summary, "hop 2 of 2")
	mustContain(t, "Markdown", UpgradeMarkdown(u, command), "# Upgrade report: 1.0.0 → 1.2.0",
		"- **To:** 1.2.0 (the last hop's: the runs' records do not keep the version the upgrade was asked for)", "- **Hops:** 2\n")
}

// Every hop that ran succeeded but the driver stopped before the last
// (a preflight problem, a version source behind): the upgrade is at the
// hop not run, Pending, not at its target.
func TestBuildUpgradeForStoppedBeforeAHop(t *testing.T) {
	hop1 := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, nil)
	hop2 := drive(t, platformPlan("platform-1.2.0", "1.2.0"), "1.1.0", epoch.Add(time.Hour), nil)
	u := BuildUpgradeFor(to130, hop1, hop2)
	if u.Phase != v1alpha1.RunPending || u.At != 3 || u.Reached != "1.2.0" || u.Next != nil {
		t.Errorf("phase %s at %d reached %s next %+v", u.Phase, u.At, u.Reached, u.Next)
	}
	if want := "at hop 3 of 3 (1.2.0 → 1.3.0): not run; the cluster is at version 1.2.0"; u.Summary != want {
		t.Errorf("summary %q, want %q", u.Summary, want)
	}
	if u := BuildUpgradeFor(to130); u.At != 1 || len(u.NotRun) != 3 || u.NotRun[0].From != "1.0.0" || u.From != "1.0.0" {
		t.Errorf("no hop run: at %d from %s not run %+v", u.At, u.From, u.NotRun)
	}
}

// A driver that stopped at a hop it resumed, before solving the rest of
// the path: the hops past it are not known, and the report says so
// rather than count the path as complete.
func TestBuildUpgradeForUnsolvedPath(t *testing.T) {
	hop2 := drive(t, platformPlan("platform-1.2.0", "1.2.0"), "1.1.0", epoch, nil)
	u := BuildUpgradeFor(Request{Target: "v1.3.0", Path: []string{"1.2.0"}}, hop2)
	if u.Phase != v1alpha1.RunPending || u.At != 2 || u.Reached != "1.2.0" {
		t.Errorf("phase %s at %d reached %s", u.Phase, u.At, u.Reached)
	}
	mustContain(t, "summary", u.Summary, "at hop 2 of at least 2", "the path from version 1.2.0 on to v1.3.0 is not solved yet")
	if u := BuildUpgradeFor(Request{From: "1.1.0", Target: "v1.2.0", Path: []string{"1.2.0"}}, hop2); u.At != 0 || u.Summary != "reached version v1.2.0 in 1 hop(s)" {
		t.Errorf("a v-prefixed target the path reaches: at %d summary %q", u.At, u.Summary)
	}
}

// A run that is not the hop the path has there is named among the
// warnings.
func TestBuildUpgradeForRunOffThePath(t *testing.T) {
	hop1 := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, nil)
	u := BuildUpgradeFor(Request{From: "1.0.0", Target: "1.3.0", Path: []string{"1.1.1", "1.3.0"}}, hop1)
	if len(u.Warnings) != 1 {
		t.Fatalf("warnings: %q", u.Warnings)
	}
	mustContain(t, "warning", u.Warnings[0], "hop 1 (run platform-1.1.0) goes to version 1.1.0, not to 1.1.1 as the path does")
}

// Every hop succeeded: the upgrade reached its target; the warnings of any
// hop are what to look into next.
func TestBuildUpgradeReachedTheTarget(t *testing.T) {
	hop1 := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, script{metricsGate: "scrape failed: 500"})
	hop2 := drive(t, platformPlan("platform-1.2.0", "1.2.0"), "1.1.0", epoch.Add(time.Hour), nil)
	u := BuildUpgrade(hop1, hop2)
	if u.Phase != v1alpha1.RunSucceeded || u.At != 0 || u.Reached != "1.2.0" || u.Summary != "reached version 1.2.0 in 2 hop(s)" {
		t.Errorf("phase %s at %d reached %s summary %q", u.Phase, u.At, u.Reached, u.Summary)
	}
	if kinds(u.Next) != string(ReviewWarnings) {
		t.Errorf("next: %+v", u.Next)
	}
	if u := BuildUpgrade(hop2); u.Next != nil || u.From != "1.1.0" {
		t.Errorf("one clean hop: from %s next %+v", u.From, u.Next)
	}
}

// A hop that failed without rollback leaves the cluster between its
// versions; a hop that did not start where the one before it ends is
// named among the warnings.
func TestBuildUpgradeBetweenVersionsAndOutOfOrder(t *testing.T) {
	p := platformPlan("platform-1.2.0", "1.2.0")
	no := false
	p.Spec.AutoRollback = &no
	hop1 := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, nil)
	hop2 := drive(t, p, "1.0.5", epoch.Add(time.Hour), script{proxyStep: "CrashLoopBackOff"})
	u := BuildUpgrade(hop1, hop2)
	mustContain(t, "summary", u.Summary, "the cluster is between versions 1.0.5 and 1.2.0")
	if len(u.Warnings) != 1 {
		t.Fatalf("warnings: %q", u.Warnings)
	}
	mustContain(t, "warning", u.Warnings[0], "hop 2 (run platform-1.2.0) started from version 1.0.5, not from 1.1.0")
	if kinds(u.Next) != "retry,rollback" {
		t.Errorf("next: %+v", u.Next)
	}
}

// No run, no hop: nothing known, and nothing breaks.
func TestBuildUpgradeOfNothing(t *testing.T) {
	u := BuildUpgrade()
	if u.From != UnknownVersion || u.To != UnknownVersion || u.Hops == nil || len(u.Hops) != 0 {
		t.Errorf("%+v", u)
	}
}
