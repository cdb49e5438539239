package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checksPlan writes a plan whose spec.checks are a runbook's success
// criteria: nodes Ready and Helm releases deployed (blocking), Flux
// HelmReleases Ready where Flux is installed (it is not here), and a
// warning on pods in a namespace that has none.
func (w *world) checksPlan(name string) string {
	path := filepath.Join(w.t.TempDir(), "plan.yaml")
	write(w.t, path, `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: `+name+`}
spec:
  version: "1.0.0"
  checks:
  - nodesReady: {}
    timeout: 2s
  - helmReleases: {}
  - ready: {apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, selector: "app.kubernetes.io/part-of=platform", ifServed: true}
  - podsRunning: {namespace: default, selector: app=platform-agent}
    severity: warning
    timeout: 2s
  stages:
  - name: config
    steps:
    - name: config
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: checked, namespace: default}
          data: {ok: "yes"}
`)
	return path
}

// TestChecksComeBeforeAnyChange: a NotReady node refuses the run with
// nothing written (no record either); once the node is back the run
// starts, the warning check's failure is shown and the run goes on, and
// the check on a kind the cluster does not serve passes as nothing to
// check.
func TestChecksComeBeforeAnyChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{Nodes: 2})
	plan := w.checksPlan("checked")
	p := w.mustExit(0, nil, "plan", "-f", plan)
	mustContain(t, "plan", p.stdout, "checks before any change (when the run starts):", "? check nodesReady", "? check podsRunning \"app=platform-agent\" in default (warning)")

	nodes, err := w.cs.CoreV1().Nodes().List(w.ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes: %v", err)
	}
	node := nodes.Items[0].Name
	if err := w.c.SetNodeReady(w.ctx, node, false); err != nil {
		t.Fatal(err)
	}
	r := w.mustExit(1, nil, "apply", "-f", plan)
	mustContain(t, "apply with a NotReady node", r.stderr, "the cluster's health checks failed before any change, nothing was changed", "spec.checks[0] nodesReady", node)
	if strings.Contains(r.stderr, "spec.checks[3]") {
		t.Errorf("a warning check is listed among the blocking ones:\n%s", r.stderr)
	}
	for _, e := range w.upshiftWrites() {
		if e.ObjectRef != nil && (e.ObjectRef.Namespace == "default" || e.ObjectRef.Resource == "upgraderuns") {
			t.Errorf("a refused run wrote %s %s", e.Verb, e.Object())
		}
	}
	if s := w.upshift(nil, "status", "checked"); s.code == 0 {
		t.Errorf("a refused run left a record: %s", s)
	}

	if err := w.c.SetNodeReady(w.ctx, node, true); err != nil {
		t.Fatal(err)
	}
	r = w.mustExit(0, nil, "apply", "-f", plan)
	mustContain(t, "apply on a healthy cluster", r.stdout+r.stderr, "spec.checks[3] podsRunning", "(warning): the run goes on", "reached version 1.0.0")
	rep := w.mustExit(0, nil, "report", "checked")
	mustContain(t, "the run's report", rep.stdout, "| before any change | nodesReady |", "the cluster does not serve helm.toolkit.fluxcd.io/v2 HelmRelease",
		`warning check podsRunning "app=platform-agent" in default did not pass`)
}
