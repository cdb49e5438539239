package autopilot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/autopilot"
)

// The preview dry-runs the Plan (so k0s's CRD judges it) and writes
// nothing; once every node runs the version, it says no Plan is written.
func TestAutopilotPreview(t *testing.T) {
	e := newEnv(t)
	ex := e.executor(t, spec(), 1)
	changes, err := ex.Preview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Action != step.Create || !strings.Contains(changes[0].Diff, "k0supdate") ||
		!strings.Contains(changes[0].Note, "node-0 at "+from) || !strings.Contains(changes[0].Note, "cannot move k0s back") {
		t.Fatalf("preview %+v, want the Plan's create with its diff and the nodes it moves", changes)
	}
	if e.plan(t) != nil {
		t.Fatal("the preview wrote the Plan")
	}
	for _, n := range e.nodes {
		if err := testenv.SetKubeletVersion(context.Background(), e.Clientset, n, autopilot.KubeletVersion(to)); err != nil {
			t.Fatal(err)
		}
	}
	changes, err = ex.Preview(context.Background())
	if err != nil || len(changes) != 1 || changes[0].Action != step.Unchanged || !strings.Contains(changes[0].Note, "no Plan is written") {
		t.Fatalf("preview at the version: %+v, %v", changes, err)
	}
}

// The step's timeout counts from its first start, saved with the run: a
// driver that comes back after it fails the step, naming what it waited
// for, instead of starting the clock again.
func TestAutopilotTimesOutFromItsFirstStart(t *testing.T) {
	e := newEnv(t)
	e.standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = true })
	ex, err := autopilot.New(spec(), step.RunAttempt{Run: "run-" + e.NS, Attempt: 1}, "k0s", time.Now().Add(-2*time.Minute), time.Minute,
		autopilot.Clients{Applier: e.Applier, Dynamic: e.Dynamic, Clientset: e.Clientset})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(context.Background())
	if err != nil || res.Status != step.Failed || !strings.Contains(res.Message, "timed out after 1m0s: nodes not on k0s "+to) {
		t.Fatalf("result %+v, %v: want the timeout, naming the nodes", res, err)
	}
	if e.plan(t) != nil {
		t.Error("a step out of time wrote its Plan")
	}
}
