package autopilot_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/autopilot"
)

// The step writes one Plan of embedded-cluster's shape, which the API
// server accepts under k0s's own CRD; autopilot (its stand-in) moves
// node-0, the controller, then the workers; the step reports EC's
// messages on the way, waits for every kubelet to report the version,
// and deletes the Plan. Run again, it writes nothing.
func TestAutopilotUpgradesEveryNodeAndDeletesItsPlan(t *testing.T) {
	e := newEnv(t)
	res, msgs := drive(t, e.executor(t, spec(), 1))
	if res.Status != step.Succeeded || !strings.Contains(res.Message, "k0s "+to+" on every node") {
		t.Fatalf("result %+v, want success on every node; on the way: %q", res, msgs)
	}
	if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, "Upgrade in being prepared (") }) {
		t.Errorf("no progress in embedded-cluster's words with the targets: %q", msgs)
	}
	if p := e.plan(t); p != nil {
		t.Errorf("the Plan is left behind: %v", p.Object["status"])
	}
	for n, v := range e.versions(t) {
		if v != "v1.34.1+k0s" {
			t.Errorf("node %s reports %s, want v1.34.1+k0s", n, v)
		}
	}
	seen := e.standIn.Seen()
	if len(seen) != 1 {
		t.Fatalf("autopilot saw %d Plans, want 1", len(seen))
	}
	p := seen[0].Object
	if a := seen[0].GetAnnotations(); a[autopilot.InstallationAnnotation] != "20261129120000" {
		t.Errorf("annotations %v, want embedded-cluster's installation-name", a)
	}
	cmd := nested(t, p, "spec", "commands").([]any)[0].(map[string]any)
	if v := nested(t, cmd, "k0supdate", "version"); v != to {
		t.Errorf("k0supdate.version %v, want %s", v, to)
	}
	if u := nested(t, cmd, "k0supdate", "platforms", "linux-amd64"); u.(map[string]any)["sha256"] != sha {
		t.Errorf("platforms.linux-amd64 %v, want the url and sha256", u)
	}
	controllers := nested(t, cmd, "k0supdate", "targets", "controllers", "discovery", "static", "nodes").([]any)
	workers := nested(t, cmd, "k0supdate", "targets", "workers", "discovery", "static", "nodes").([]any)
	if len(controllers) != 1 || controllers[0] != "node-0" || len(workers) != len(e.nodes)-1 || slices.Contains(workers, any("node-0")) {
		t.Errorf("controllers %v, workers %v: want node-0 (control-plane) and the others", controllers, workers)
	}
	if id, _ := nested(t, p, "spec", "id").(string); len(id) != 36 {
		t.Errorf("spec.id %q is no UUID", id)
	}

	res, _ = drive(t, e.executor(t, spec(), 1))
	if res.Status != step.Succeeded || !strings.Contains(res.Message, "already: no autopilot Plan written") || len(e.standIn.Seen()) != 1 {
		t.Errorf("run again on nodes at the version: %+v, %d Plans", res, len(e.standIn.Seen()))
	}
}

// A Plan autopilot ends ApplyFailed or IncompleteTargets fails the step
// with embedded-cluster's message and the targets at fault, and is left
// for the stage's rollback; the Reverter then deletes it and names the
// nodes autopilot had moved, which a rollback cannot move back.
func TestAutopilotFailsWithEmbeddedClustersMessage(t *testing.T) {
	for _, tc := range []struct{ end, node, want, target string }{
		{"ApplyFailed", "node-2", "Upgrade apply has failed", "SignalApplyFailed: node-2"},
		{"IncompleteTargets", "node-1", "Upgrade has failed (malformed request)", "SignalMissingNode: node-1"},
	} {
		t.Run(tc.end, func(t *testing.T) {
			e := newEnv(t)
			e.standIn.Set(func(a *testenv.AutopilotStandIn) { a.End, a.FailNode = tc.end, tc.node })
			res, _ := drive(t, e.executor(t, spec(), 1))
			if res.Status != step.Failed || !strings.Contains(res.Message, tc.want) || !strings.Contains(res.Message, tc.target) {
				t.Fatalf("result %+v, want a failure saying %q and %q", res, tc.want, tc.target)
			}
			if e.plan(t) == nil {
				t.Error("the failed Plan was deleted: the stage's rollback removes it, and an operator may read it first")
			}
			done, err := autopilot.NewReverter(spec(), step.RunAttempt{Run: "run-" + e.NS, Attempt: 1}, "k0s", e.Dynamic, e.Clientset).Revert(context.Background(), nil)
			if err != nil || done.Status != step.Succeeded || !strings.Contains(done.Message, "its autopilot Plan deleted") {
				t.Fatalf("Revert: %+v, %v", done, err)
			}
			if e.plan(t) != nil {
				t.Error("the rollback left the step's failed Plan")
			}
			moved := []string{}
			for n, v := range e.versions(t) {
				if v == "v1.34.1+k0s" {
					moved = append(moved, n)
				}
			}
			for _, n := range moved {
				if !strings.Contains(done.Message, n) {
					t.Errorf("the revert does not name %s, left on the new version: %q", n, done.Message)
				}
			}
			if len(moved) > 0 && !strings.Contains(done.Message, "not rolled back") {
				t.Errorf("the revert pretends k0s went back: %q", done.Message)
			}
		})
	}
}

// A driver that stops while autopilot works (a killed controller or
// server) and starts again finds its Plan by name and annotation and
// watches that Plan on: never a second one.
func TestAutopilotResumesWatchingTheSamePlan(t *testing.T) {
	e := newEnv(t)
	e.standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = true })
	first := e.executor(t, spec(), 1)
	for range 3 {
		if res, err := first.Run(context.Background()); err != nil || res.Status != step.Running {
			t.Fatalf("Run: %+v, %v", res, err)
		}
	}
	uid := e.plan(t).GetUID()
	e.standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = false })
	res, _ := drive(t, e.executor(t, spec(), 1)) // the restarted driver's
	if res.Status != step.Succeeded {
		t.Fatalf("resumed: %+v", res)
	}
	seen := e.standIn.Seen()
	if len(seen) != 1 || seen[0].GetUID() != uid {
		t.Errorf("autopilot saw %d Plans, want the one written before the restart", len(seen))
	}
}

// Another upgrade's Plan still in progress is waited for, never cut
// short; one that ended is deleted and the step's own written, as
// embedded-cluster does.
func TestAutopilotWaitsForAnotherPlanThenReplacesIt(t *testing.T) {
	e := newEnv(t)
	e.standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = true })
	ctx := context.Background()
	foreign := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "autopilot.k0sproject.io/v1beta2", "kind": "Plan", "metadata": map[string]any{"name": "autopilot"},
		"spec": map[string]any{"id": "someone-elses", "timestamp": "now", "commands": []any{map[string]any{"airgapupdate": map[string]any{
			"version": "v1.33.5+k0s.0", "platforms": map[string]any{"linux-amd64": map[string]any{"url": "http://127.0.0.1:50000/images"}},
			"workers": map[string]any{"discovery": map[string]any{"static": map[string]any{"nodes": []any{"node-1"}}}}}}}},
	}}
	created, err := e.Dynamic.Resource(autopilot.GVR).Create(ctx, foreign, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setState := func(state string) {
		t.Helper()
		p := e.plan(t)
		_ = unstructured.SetNestedField(p.Object, map[string]any{"state": state, "commands": []any{map[string]any{"id": int64(0), "state": state}}}, "status")
		if _, err := e.Dynamic.Resource(autopilot.GVR).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setState(autopilot.Schedulable)
	ex := e.executor(t, spec(), 1)
	res, err := ex.Run(ctx)
	if err != nil || res.Status != step.Running || !strings.Contains(res.Message, "not written by Upshift is in progress") {
		t.Fatalf("with another Plan in progress: %+v, %v", res, err)
	}
	if p := e.plan(t); p == nil || p.GetUID() != created.GetUID() {
		t.Fatal("another upgrade's Plan in progress was replaced")
	}
	setState(autopilot.ApplyFailed)
	if res, err = ex.Run(ctx); err != nil || !strings.Contains(res.Message, "deleted autopilot Plan autopilot not written by Upshift, which had ended ApplyFailed") {
		t.Fatalf("with another Plan ended: %+v, %v", res, err)
	}
	e.standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = false })
	if res, _ = drive(t, ex); res.Status != step.Succeeded {
		t.Fatalf("after the other Plan: %+v", res)
	}
}

// Autopilot completes a Plan's static targets only: a node that joined
// after the Plan was written is never moved, and the step says so at
// once instead of waiting out its timeout.
func TestAutopilotNamesANodeThatJoinedAfterThePlan(t *testing.T) {
	e := newEnv(t)
	e.standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = true })
	ex := e.executor(t, spec(), 1)
	if res, err := ex.Run(context.Background()); err != nil || res.Status != step.Running {
		t.Fatalf("Run: %+v, %v", res, err)
	}
	if err := localcluster.AddNodes(context.Background(), e.Clientset, len(e.nodes)+1); err != nil {
		t.Fatal(err)
	}
	late := localcluster.NodeName(len(e.nodes))
	t.Cleanup(func() { _ = e.Clientset.CoreV1().Nodes().Delete(context.Background(), late, metav1.DeleteOptions{}) })
	e.standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = false })
	res, _ := drive(t, ex)
	if res.Status != step.Failed || !strings.Contains(res.Message, "nodes "+late+" joined after the Plan was written") {
		t.Fatalf("result %+v, want a failure naming %s", res, late)
	}
}

// An airgap step writes airgapupdate for every node and is done once
// autopilot completes it: an image bundle changes no kubelet's version.
func TestAutopilotAirgapBundle(t *testing.T) {
	e := newEnv(t)
	s := spec()
	s.Airgap = true
	res, _ := drive(t, e.executor(t, s, 1))
	if res.Status != step.Succeeded || !strings.Contains(res.Message, "image bundle on every node") {
		t.Fatalf("result %+v", res)
	}
	seen := e.standIn.Seen()
	if len(seen) != 1 {
		t.Fatalf("autopilot saw %d Plans", len(seen))
	}
	cmd := nested(t, seen[0].Object, "spec", "commands").([]any)[0].(map[string]any)
	workers := nested(t, cmd, "airgapupdate", "workers", "discovery", "static", "nodes").([]any)
	if len(workers) != len(e.nodes) {
		t.Errorf("airgapupdate workers %v, want every node %v", workers, e.nodes)
	}
	if e.plan(t) != nil {
		t.Error("the Plan is left behind")
	}
	for n, v := range e.versions(t) {
		if v != from {
			t.Errorf("node %s reports %s after an image bundle", n, v)
		}
	}
}
