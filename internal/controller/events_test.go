package controller

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

// newRun is a run as the engine starts it, of a plan of three stages:
// crds (a step and a gate), hold (an approval), data-plane (two steps).
func newRun(autoRollback bool) *v1alpha1.UpgradeRun {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo-1.1.0"}} // a plan file's: its run is named demo-1.1.0
	p.Spec = v1alpha1.UpgradePlanSpec{Version: "1.1.0", AutoRollback: &autoRollback, Stages: []v1alpha1.Stage{
		{Name: "crds", Steps: []v1alpha1.Step{{Name: "crds", CRDs: &v1alpha1.CRDsStep{}}},
			Gates: []v1alpha1.Gate{{Ready: &v1alpha1.ReadyGate{Kind: "Deployment", Namespace: "web", Name: "web"}}}},
		{Name: "hold", Steps: []v1alpha1.Step{{Name: "go-ahead", Approval: &v1alpha1.ApprovalStep{}}}},
		{Name: "data-plane", Steps: []v1alpha1.Step{{Name: "proxy", Image: &v1alpha1.ImageStep{}}, {Name: "config", Manifests: &v1alpha1.ManifestsStep{}}}},
	}}
	return engine.NewRun(p, "sha256:a", nil, t0)
}

// transition is one saved transition and the notes it made.
type transition struct {
	action string // as engine.Action.String, with "begin " or "complete " before
	notes  []Note
}

func (tr transition) String() string {
	var b strings.Builder
	b.WriteString(tr.action + ":")
	for _, n := range tr.notes {
		fmt.Fprintf(&b, " [%s %s: %s]", n.Type, n.Reason, n.Message)
	}
	return b.String()
}

// move moves the run as the controller's drive does (before is the phase
// the last transition left, Pending at first), every action succeeding
// unless outcome says otherwise, until stop holds after a transition or
// the run is done. It returns the transitions with their notes.
func move(r *v1alpha1.UpgradeRun, before v1alpha1.RunPhase, outcome func(engine.Action) engine.Outcome, stop func(transition) bool) []transition {
	var out []transition
	record := func(e engine.Event, what string) bool {
		tr := transition{action: what + " " + e.Action.String(), notes: NotesFor(e, before)}
		before = phaseOf(e.Run)
		out = append(out, tr)
		return stop != nil && stop(tr)
	}
	for range 100 {
		a := engine.Next(r)
		if a.Kind == engine.Done {
			return out
		}
		engine.Begin(r, a, t0)
		if record(engine.Event{Action: a, Begin: true, Run: r}, "begin") {
			return out
		}
		o := engine.Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}, Rollback: &v1alpha1.Rollback{}}
		if outcome != nil {
			o = outcome(a)
		}
		engine.Complete(r, a, o, t0)
		if record(engine.Event{Action: a, Outcome: o, Run: r}, "complete") {
			return out
		}
	}
	panic("the run did not settle in 100 actions")
}

// failing fails the action named (as engine.Action.String) with msg.
func failing(name, msg string) func(engine.Action) engine.Outcome {
	return func(a engine.Action) engine.Outcome {
		if a.String() == name {
			return engine.Outcome{Message: msg, Rollback: &v1alpha1.Rollback{}}
		}
		return engine.Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}, Rollback: &v1alpha1.Rollback{}}
	}
}

func until(action string) func(transition) bool {
	return func(tr transition) bool { return tr.action == action }
}

// noted lists the transitions that made notes.
func noted(trs []transition) []string {
	var out []string
	for _, tr := range trs {
		if len(tr.notes) > 0 {
			out = append(out, tr.String())
		}
	}
	return out
}

func checkNotes(t *testing.T, trs []transition, want []string) {
	t.Helper()
	got := noted(trs)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// A run that goes through makes a note at its start, at the completion
// that finishes each stage (not at a backup, nor at a step that leaves a
// step or gates), at an unapproved approval, and at its end; none for
// step starts and successes.
func TestNotesForARunThatSucceeds(t *testing.T) {
	trs := move(newRun(true), v1alpha1.RunPending, nil, nil)
	checkNotes(t, trs, []string{
		"begin backup 0: [Normal RunStarted: run demo-1.1.0 started (attempt 1): 3 stages to version 1.1.0]",
		"complete gate 0/0: [Normal StageSucceeded: stage crds succeeded]",
		"begin step 1/0: [Normal WaitingForApproval: step go-ahead of stage hold waits for an approval: annotate upshift.dev/approve=go-ahead]",
		"complete step 1/0: [Normal StageSucceeded: stage hold succeeded]",
		"complete step 2/1: [Normal StageSucceeded: stage data-plane succeeded] [Normal Succeeded: run demo-1.1.0 succeeded: reached version 1.1.0]",
	})
}

// An approval given ahead of time makes no WaitingForApproval note.
func TestNotesForAnApprovalGivenAhead(t *testing.T) {
	r := newRun(true)
	if _, err := engine.Approve(r, "go-ahead", "alice", t0); err != nil {
		t.Fatal(err)
	}
	for _, tr := range move(r, v1alpha1.RunPending, nil, nil) {
		for _, n := range tr.notes {
			if n.Reason == ReasonApprovalWaiting {
				t.Errorf("%s: an approved step noted as waiting", tr)
			}
		}
	}
}

// RunStarted comes with the first Begin of an attempt only: not when a
// driver resumes a run that was running or aborted, nor after a retry of
// a failed step.
func TestRunStarted(t *testing.T) {
	started := func(r *v1alpha1.UpgradeRun, a engine.Action, before v1alpha1.RunPhase) bool {
		for _, n := range NotesFor(engine.Event{Action: a, Begin: true, Run: r}, before) {
			if n.Reason == ReasonRunStarted {
				return true
			}
		}
		return false
	}
	backup0 := engine.Action{Kind: engine.Backup}
	for _, tc := range []struct {
		before v1alpha1.RunPhase
		want   bool
	}{
		{v1alpha1.RunPending, true},
		{"", true},
		{v1alpha1.RunRunning, false}, // resumed after a restart
		{v1alpha1.RunAborted, false}, // resumed after an abort
		{v1alpha1.RunFailed, false},  // a failed step retried
	} {
		r := newRun(true)
		engine.Begin(r, backup0, t0)
		if got := started(r, backup0, tc.before); got != tc.want {
			t.Errorf("first Begin, before %q: RunStarted %v, want %v", tc.before, got, tc.want)
		}
	}

	// A rolled-back run started over (apply --retry) starts anew.
	r := newRun(true)
	move(r, v1alpha1.RunPending, failing("step 2/0", "boom"), nil)
	if r.Status.Phase != v1alpha1.RunRolledBack {
		t.Fatalf("run %s, want RolledBack", r.Status.Phase)
	}
	if err := engine.NewAttempt(r, t0); err != nil {
		t.Fatal(err)
	}
	trs := move(r, v1alpha1.RunRolledBack, nil, until("begin backup 0"))
	want := "begin backup 0: [Normal RunStarted: run demo-1.1.0 started (attempt 2): 3 stages to version 1.1.0]"
	if got := trs[0].String(); got != want {
		t.Errorf("the new attempt's first Begin:\n  %s\nwant:\n  %s", got, want)
	}

	// Later Begins of the run make none.
	trs = move(newRun(true), v1alpha1.RunPending, nil, nil)
	for _, tr := range trs[1:] {
		for _, n := range tr.notes {
			if n.Reason == ReasonRunStarted {
				t.Errorf("%s: RunStarted again", tr)
			}
		}
	}
}

// Failures are warnings naming what failed, with the outcome's message,
// followed by the run's change of phase (a warning for every phase but
// Succeeded).
func TestNotesForFailures(t *testing.T) {
	for _, tc := range []struct {
		name         string
		autoRollback bool
		outcome      func(engine.Action) engine.Outcome
		want         []string
	}{
		{"a step fails, no rollback", false, failing("step 0/0", "CRD not established"), []string{
			"complete step 0/0: [Warning StepFailed: stage crds: step crds failed: CRD not established] [Warning Failed: run demo-1.1.0 failed: stage crds: step crds failed: CRD not established]",
		}},
		{"a gate fails, rolled back", true, failing("gate 0/0", "0/1 ready"), []string{
			"complete gate 0/0: [Warning GateFailed: stage crds: gate ready deployment web/web failed: 0/1 ready] [Warning RollingBack: run demo-1.1.0 is rolling back: stage crds: gate ready deployment web/web failed: 0/1 ready]",
			"complete restore 0: [Normal StageRestored: stage crds restored from its backup and verified] [Warning RolledBack: run demo-1.1.0 rolled back: stage crds: gate ready deployment web/web failed: 0/1 ready; rolled back crds; restore verified]",
		}},
		{"a backup fails", true, failing("backup 0", "etcd full"), []string{
			"complete backup 0: [Warning BackupFailed: stage crds: backup failed: etcd full] [Warning RolledBack: run demo-1.1.0 rolled back: stage crds: backup failed, nothing was changed: etcd full; nothing needed undoing]",
		}},
		{"a restore fails", true, func(a engine.Action) engine.Outcome {
			if a.String() == "restore 0" {
				return engine.Outcome{Message: "conflict", Rollback: &v1alpha1.Rollback{}}
			}
			return failing("gate 0/0", "0/1 ready")(a)
		}, []string{
			"complete gate 0/0: [Warning GateFailed: stage crds: gate ready deployment web/web failed: 0/1 ready] [Warning RollingBack: run demo-1.1.0 is rolling back: stage crds: gate ready deployment web/web failed: 0/1 ready]",
			"complete restore 0: [Warning RestoreFailed: stage crds: rollback failed: conflict] [Warning RollbackFailed: run demo-1.1.0 failed to roll back: stage crds: gate ready deployment web/web failed: 0/1 ready; rolling back stage crds failed: conflict]",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trs := move(newRun(tc.autoRollback), v1alpha1.RunPending, tc.outcome, nil)
			checkNotes(t, trs[1:], tc.want) // after RunStarted
		})
	}
}

// A gate of warning severity that fails lets its stage go on: the stage
// that it finishes is still noted as succeeded.
func TestNotesForAWarningGate(t *testing.T) {
	r := newRun(true)
	r.Spec.Plan.Stages[0].Gates[0].Severity = v1alpha1.SeverityWarning
	trs := move(r, v1alpha1.RunPending, failing("gate 0/0", "0/1 ready"), until("complete gate 0/0"))
	checkNotes(t, trs[1:], []string{
		"complete gate 0/0: [Warning GateFailed: stage crds: gate ready deployment web/web failed: 0/1 ready] [Normal StageSucceeded: stage crds succeeded]",
	})
}

// Credentials in a URL of a message do not reach an event.
func TestNotesAreRedacted(t *testing.T) {
	const secret = "hunter22"
	trs := move(newRun(false), v1alpha1.RunPending, failing("step 2/0", "pull https://bob:"+secret+"@registry.example.com/web?token=s3cr3t failed"), nil)
	var n int
	for _, tr := range trs {
		for _, note := range tr.notes {
			n++
			if strings.Contains(note.Message, secret) || strings.Contains(note.Message, "bob") || strings.Contains(note.Message, "s3cr3t") {
				t.Errorf("a secret in %s %s: %s", note.Type, note.Reason, note.Message)
			}
		}
	}
	if got := noted(trs); len(got) == 0 || !strings.Contains(got[len(got)-1], "registry.example.com/web") {
		t.Errorf("the failure is not told (%d notes): %v", n, got)
	}
}

// A long message is cut in its middle to at most 1 KiB, and stays valid
// UTF-8 wherever the cut falls; its start and its end (a log tail) stay.
func TestNotesAreClipped(t *testing.T) {
	for _, filler := range []string{"x", "é", "€", "😀"} {
		msg := "START " + strings.Repeat(filler, 3000) + " END"
		trs := move(newRun(false), v1alpha1.RunPending, failing("step 2/0", msg), nil)
		notes := trs[len(trs)-1].notes
		if len(notes) == 0 {
			t.Fatal("no note for the failure")
		}
		for _, n := range notes {
			switch {
			case len(n.Message) > maxNote:
				t.Errorf("%q filler: a note of %d bytes", filler, len(n.Message))
			case !utf8.ValidString(n.Message):
				t.Errorf("%q filler: a note that is not UTF-8: %q", filler, n.Message)
			case !strings.Contains(n.Message, "START") || !strings.HasSuffix(n.Message, " END") || !strings.Contains(n.Message, " … "):
				t.Errorf("%q filler: not clipped in the middle: %q", filler, n.Message)
			}
		}
	}
	for _, s := range []string{"", "short", strings.Repeat("a", maxNote)} {
		if got := clip(s); got != s {
			t.Errorf("clip of %d bytes changed it", len(s))
		}
	}
	if got := clip(strings.Repeat("a", maxNote+1)); len(got) > maxNote || !strings.Contains(got, "…") {
		t.Errorf("clip of %d bytes: %d bytes", maxNote+1, len(got))
	}
}

// An event whose action names no stage of the run makes no note.
func TestNotesForAnUnknownStage(t *testing.T) {
	r := newRun(true)
	for _, stage := range []int{-1, 3} {
		if n := NotesFor(engine.Event{Action: engine.Action{Kind: engine.Backup, Stage: stage}, Outcome: engine.Outcome{Message: "x"}, Run: r}, v1alpha1.RunPending); n != nil {
			t.Errorf("stage %d: %v", stage, n)
		}
	}
}
