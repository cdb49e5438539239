package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

// command stands for a driver's renderer in the golden files.
func command(a Action) string {
	c := "driver " + string(a.Kind) + " " + a.Run
	if a.Step != "" {
		c += " --step " + a.Step
	}
	return c
}

const healthFailure = "GET http://127.0.0.1:8080/healthz: 503 Service Unavailable"

func kinds(actions []Action) string {
	var out []string
	for _, a := range actions {
		out = append(out, string(a.Kind))
	}
	return strings.Join(out, ",")
}

func gateNames(gates []Gate) string {
	var out []string
	for _, g := range gates {
		out = append(out, g.Stage+"/"+g.Name+"="+string(g.Result))
	}
	return strings.Join(out, " ")
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}

// A run that reached its version although a warning and an info gate did
// not pass: every stage and step with its timing, the gates by severity,
// the warning gate among the warnings (the info gate only in its group),
// nothing rolled back, and "look into the warnings" next.
func TestBuildSucceededWithWarnings(t *testing.T) {
	run := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, script{metricsGate: "scrape failed: 500", docsGate: "no pod matches app=docs"})
	rep := Build(run)
	if rep.Phase != v1alpha1.RunSucceeded || rep.From != "1.0.0" || rep.To != "1.1.0" || rep.Summary != "reached version 1.1.0" {
		t.Errorf("header: phase %s from %s to %s summary %q", rep.Phase, rep.From, rep.To, rep.Summary)
	}
	if len(rep.Stages) != 3 || len(rep.Stages[1].Steps) != 2 {
		t.Fatalf("stages: %+v", rep.Stages)
	}
	for _, s := range rep.Stages {
		if s.Duration == nil || s.Backup == nil || s.Backup.Objects != 2 {
			t.Errorf("stage %s: duration %v backup %+v", s.Name, s.Duration, s.Backup)
		}
		for _, st := range s.Steps {
			if st.Phase != v1alpha1.PhaseSucceeded || st.Started == nil || st.Duration == nil || st.Duration.Duration != time.Second {
				t.Errorf("step %s: %s, started %v, took %v; want Succeeded in 1s", st.Name, st.Phase, st.Started, st.Duration)
			}
		}
	}
	if got, want := gateNames(rep.Gates.Blocking), "control-plane/ready deployment platform/manager=passed control-plane/http http://127.0.0.1:8080/healthz=passed data-plane/nodesReady=passed"; got != want {
		t.Errorf("blocking gates:\n got %s\nwant %s", got, want)
	}
	if len(rep.Gates.Warning) != 1 || rep.Gates.Warning[0].Result != Failed || rep.Gates.Warning[0].Message != "scrape failed: 500" {
		t.Errorf("warning gates: %+v (the message without the engine's severity prefix)", rep.Gates.Warning)
	}
	if len(rep.Gates.Info) != 1 || rep.Gates.Info[0].Result != Failed {
		t.Errorf("info gates: %+v", rep.Gates.Info)
	}
	if len(rep.Warnings) != 1 {
		t.Fatalf("warnings: %q, want the warning gate alone (info gates are recorded only)", rep.Warnings)
	}
	mustContain(t, "warning", rep.Warnings[0], "control-plane", "http://127.0.0.1:9090/metrics", "scrape failed: 500")
	if rep.Rollback != nil {
		t.Errorf("rollback %+v, want none", rep.Rollback)
	}
	if kinds(rep.Next) != string(ReviewWarnings) {
		t.Errorf("next: %+v", rep.Next)
	}
	golden(t, "succeeded-with-warnings.md", Markdown(rep, command))
}

// A blocking gate fails: the run rolls back. The report names the failed
// gate under blocking, the stages rolled back (last first) with the
// restore verified, the CRD the rollback kept, a later stage that never
// ran, and a new attempt next.
func TestBuildRolledBack(t *testing.T) {
	run := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, script{metricsGate: "scrape failed: 500", healthGate: healthFailure})
	rep := Build(run)
	if rep.Phase != v1alpha1.RunRolledBack || rep.Summary != "rolled back, restore verified" {
		t.Errorf("phase %s summary %q", rep.Phase, rep.Summary)
	}
	mustContain(t, "failure", rep.Failure, "stage control-plane", "gate http http://127.0.0.1:8080/healthz failed", "503")
	if got, want := gateNames(rep.Gates.Blocking), "control-plane/ready deployment platform/manager=passed control-plane/http http://127.0.0.1:8080/healthz=failed data-plane/nodesReady=not-checked"; got != want {
		t.Errorf("blocking gates:\n got %s\nwant %s", got, want)
	}
	if dp := rep.Stages[2]; dp.Phase != v1alpha1.PhasePending || dp.Started != nil || dp.Steps[0].Duration != nil {
		t.Errorf("a stage that never ran: %+v", dp)
	}
	rb := rep.Rollback
	if rb == nil || !rb.Done || !rb.Verified || len(rb.Stages) != 2 {
		t.Fatalf("rollback: %+v", rb)
	}
	if rb.Stages[0].Stage != "control-plane" || rb.Stages[1].Stage != "crds" || !rb.Stages[0].Verified || rb.Stages[0].Restored != 2 {
		t.Errorf("rolled-back stages, last first: %+v", rb.Stages)
	}
	mustContain(t, "warnings", strings.Join(rep.Warnings, "\n"), "warning gate http http://127.0.0.1:9090/metrics did not pass", "kept customresourcedefinition widgets.example.com")
	if kinds(rep.Next) != string(NewAttempt) {
		t.Fatalf("next: %+v", rep.Next)
	}
	mustContain(t, "next", rep.Next[0].Why, "fix the cause this report shows")
	golden(t, "rolled-back.md", Markdown(rep, command))

	// The JSON form is the API of `upshift report -o json`: pin it.
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rolled-back.json", string(b)+"\n")
}

// Without autoRollback a failed step stops the run for an operator:
// nothing rolled back, retry or roll back next.
func TestBuildFailedNotRolledBack(t *testing.T) {
	p := platformPlan("platform-1.1.0", "1.1.0")
	no := false
	p.Spec.AutoRollback = &no
	rep := Build(drive(t, p, "1.0.0", epoch, script{proxyStep: "rollout of DaemonSet platform/proxy: CrashLoopBackOff"}))
	if rep.Phase != v1alpha1.RunFailed || rep.Rollback != nil {
		t.Errorf("phase %s rollback %+v", rep.Phase, rep.Rollback)
	}
	if s := rep.Stages[2].Steps[0]; s.Phase != v1alpha1.PhaseFailed || !strings.Contains(s.Message, "CrashLoopBackOff") || s.Duration == nil {
		t.Errorf("failed step: %+v", s)
	}
	if kinds(rep.Next) != "retry,rollback" {
		t.Errorf("next: %+v", rep.Next)
	}
}

// A restore that finds a difference: the rollback failed and stopped
// there (the earlier stage is not restored); not verified; the difference
// shown; inspect the backup, then roll back again.
func TestBuildRollbackFailed(t *testing.T) {
	rep := Build(drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, script{healthGate: healthFailure, restoreCtrl: "deployment platform/manager: spec.replicas is 3, the snapshot says 2"}))
	rb := rep.Rollback
	if rep.Phase != v1alpha1.RunRollbackFailed || rb == nil || !rb.Done || rb.Verified || len(rb.Stages) != 1 {
		t.Fatalf("phase %s rollback %+v", rep.Phase, rb)
	}
	if s := rb.Stages[0]; s.Stage != "control-plane" || s.Verified || len(s.Differences) != 1 {
		t.Errorf("stage rollback: %+v", s)
	}
	if len(rb.Pending) != 1 || rb.Pending[0] != "crds" {
		t.Errorf("stages not undone: %q, want crds", rb.Pending)
	}
	if kinds(rep.Next) != "inspect-backup,rollback" {
		t.Errorf("next: %+v", rep.Next)
	}
	golden(t, "rollback-failed.md", Markdown(rep, command))
}

// A run waiting at an approval step says so and asks for that approval;
// once approved, the step shows who approved it and the report no longer
// asks.
func TestBuildWaitingForApproval(t *testing.T) {
	p := platformPlan("platform-1.1.0", "1.1.0")
	p.Spec.Stages[0].Steps = append([]v1alpha1.Step{{Name: "change-window", Approval: &v1alpha1.ApprovalStep{}}}, p.Spec.Stages[0].Steps...)
	c := &clock{t: epoch}
	r := engine.NewRun(p, "sha256:a", nil, c.now())
	engine.Begin(r, engine.Action{Kind: engine.Backup, Stage: 0}, c.now())
	engine.Complete(r, engine.Action{Kind: engine.Backup, Stage: 0}, engine.Outcome{OK: true, Backup: &v1alpha1.BackupRef{}}, c.now())
	engine.Begin(r, engine.Action{Kind: engine.RunStep, Stage: 0, Index: 0}, c.now())
	rep := Build(r)
	if rep.Summary != "waiting for approval of step change-window" || len(rep.Next) != 1 || rep.Next[0].Kind != Approve || rep.Next[0].Step != "change-window" {
		t.Errorf("summary %q next %+v", rep.Summary, rep.Next)
	}
	if _, err := engine.Approve(r, "change-window", "alice@laptop", c.now()); err != nil {
		t.Fatal(err)
	}
	rep = Build(r)
	if rep.Stages[0].Steps[0].ApprovedBy != "alice@laptop" || kinds(rep.Next) != "watch,resume" {
		t.Errorf("approved: step %+v next %+v", rep.Stages[0].Steps[0], rep.Next)
	}
}

// Every phase has its way on, as data for the driver to render.
func TestNextByPhase(t *testing.T) {
	want := map[v1alpha1.RunPhase]string{
		v1alpha1.RunPending:        "resume",
		v1alpha1.RunRunning:        "watch,resume",
		v1alpha1.RunSucceeded:      "",
		v1alpha1.RunFailed:         "retry,rollback",
		v1alpha1.RunRollingBack:    "watch,rollback",
		v1alpha1.RunRolledBack:     "new-attempt",
		v1alpha1.RunRollbackFailed: "inspect-backup,rollback",
		v1alpha1.RunAborted:        "resume,rollback",
	}
	for phase, w := range want {
		r := &v1alpha1.UpgradeRun{}
		r.Name, r.Status.Phase = "demo", phase
		rep := Build(r)
		if got := kinds(rep.Next); got != w {
			t.Errorf("%s: next %q, want %q", phase, got, w)
		}
		for _, a := range rep.Next {
			if a.Run != "demo" || a.Why == "" || strings.Contains(a.Why, "upshift ") {
				t.Errorf("%s: action %+v: names its run, says why, and holds no command", phase, a)
			}
		}
	}
}

// A record that does not say where the run started from reads "unknown".
func TestBuildFromUnknown(t *testing.T) {
	rep := Build(drive(t, platformPlan("platform-1.1.0", "1.1.0"), "", epoch, nil))
	if rep.From != UnknownVersion {
		t.Errorf("from %q, want %q", rep.From, UnknownVersion)
	}
}

// A URL's credentials in a gate and in a message recorded raw (as records
// of earlier versions may hold them) reach neither form of the report.
func TestBuildRedacts(t *testing.T) {
	p := platformPlan("platform-1.1.0", "1.1.0")
	p.Spec.Stages[1].Gates[3].HTTP.URL = "https://ops:s3cret@127.0.0.1:8443/healthz?token=t0ken"
	run := drive(t, p, "1.0.0", epoch, script{healthGate: "GET https://ops:s3cret@127.0.0.1:8443/healthz?token=t0ken: 503"})
	run.Status.Stages[1].Gates[3].Name = "http " + p.Spec.Stages[1].Gates[3].HTTP.URL
	rep := Build(run)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{string(b), Markdown(rep, command)} {
		if strings.Contains(out, "s3cret") || strings.Contains(out, "t0ken") {
			t.Errorf("a credential reached the report:\n%s", out)
		}
		mustContain(t, "report", out, "127.0.0.1:8443/healthz")
	}
	if !strings.Contains(run.Status.Stages[1].Gates[3].Name, "s3cret") {
		t.Error("Build changed the run it was given")
	}
}

// Messages are free text: a "|" must not split a table cell, a line break
// must not end a row, and "<redacted>" must not vanish as an HTML tag.
func TestMarkdownKeepsTablesWhole(t *testing.T) {
	run := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, script{proxyStep: "exit 1 | last log lines:\npassword=<redacted>\n`boom`"})
	md := Markdown(Build(run), nil)
	mustContain(t, "markdown", md, "| proxy | Failed | 2026-01-01T00:00:22Z | 1s | exit 1 \\| last log lines:<br>password=\\<redacted><br>\\`boom\\` |\n")
	if strings.Contains(md, "`driver") {
		t.Error("without a renderer, no command is shown")
	}
}

// TestBuildReportsTheChecks: the health checks a run started with are
// gates "before any change", grouped by their severity; a warning one
// that failed is a warning.
func TestBuildReportsTheChecks(t *testing.T) {
	run := &v1alpha1.UpgradeRun{
		Spec: v1alpha1.UpgradeRunSpec{Plan: v1alpha1.UpgradePlanSpec{Version: "1.0.0", Checks: []v1alpha1.Gate{
			{NodesReady: &v1alpha1.NodesReadyGate{}},
			{Severity: v1alpha1.SeverityWarning, PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "n", Selector: "app=a"}},
		}}},
		Status: v1alpha1.RunStatus{Phase: v1alpha1.RunSucceeded, Checks: []v1alpha1.StepStatus{
			{Name: "nodesReady", Phase: v1alpha1.PhaseSucceeded, Message: "3 of 3 nodes Ready"},
			{Name: `podsRunning "app=a" in n`, Phase: v1alpha1.PhaseWarned, Message: "no pod matches"},
		}},
	}
	rep := Build(run)
	if len(rep.Gates.Blocking) != 1 || rep.Gates.Blocking[0].Stage != BeforeAnyChange || rep.Gates.Blocking[0].Result != Passed {
		t.Errorf("blocking gates: %+v", rep.Gates.Blocking)
	}
	if len(rep.Gates.Warning) != 1 || rep.Gates.Warning[0].Result != Failed {
		t.Errorf("warning gates: %+v", rep.Gates.Warning)
	}
	if len(rep.Warnings) == 0 || !strings.Contains(rep.Warnings[0], `before any change: warning check podsRunning "app=a" in n did not pass: no pod matches`) {
		t.Errorf("warnings: %q", rep.Warnings)
	}
}
