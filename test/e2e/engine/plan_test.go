package engine_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

var update = flag.Bool("update", false, "rewrite the golden files of the plan preview")

// TestPlanAgainstTheCluster: on a cluster running demo 1.0.0, `upshift
// plan` for 1.1.0 passes preflight, previews each step's changes with
// diffs, and writes nothing (the audit log shows only access reviews and
// dry runs by its user; every resourceVersion is unchanged).
func TestPlanAgainstTheCluster(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	demo := filepath.Join(repoRoot(), "examples", "demo")
	w.mustExit(0, nil, "apply", "-f", filepath.Join(demo, "1.0.0", "plan.yaml"))
	writes := len(w.upshiftWrites())
	versions := w.resourceVersions()

	r := w.mustExit(0, nil, "plan", "-f", filepath.Join(demo, "1.1.0", "plan.yaml"))
	mustContain(t, "plan output", r.stdout,
		"plan demo-1.1.0: target version 1.1.0",
		"update customresourcedefinition gatewaytemplates.networking.demo.upshift.dev",
		"update deployment demo-system/demo-controller-manager",
		"+++ planned",
		"run job demo-system/demo-migrate-1-1-0",
		"recreate deployment demo-tenant-",
		"step approve: wait for `upshift approve`",
		"preflight passed: nothing was changed")

	j := w.mustExit(0, nil, "plan", "-f", filepath.Join(demo, "1.1.0", "plan.yaml"), "-o", "json")
	var pv runner.PlanPreview
	if err := json.Unmarshal([]byte(j.stdout), &pv); err != nil {
		t.Fatalf("plan -o json: %v\n%s", err, j.stdout)
	}
	// Estimates come from the 1.0.0 run's timings: present, not golden.
	if pv.Stages[0].Estimate == "" {
		t.Errorf("stage %s has no estimate though the 1.0.0 run ran it", pv.Stages[0].Name)
	}
	pv.Estimate = ""
	for i := range pv.Stages {
		pv.Stages[i].Estimate, pv.Stages[i].EstimateFrom = "", 0
	}
	got, err := json.MarshalIndent(pv, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "plan-demo-1.1.0.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("plan -o json differs from %s (run with -update after checking the change):\n%s", golden, got)
	}

	if after := w.upshiftWrites(); len(after) != writes {
		for _, e := range after[writes:] {
			t.Errorf("plan wrote: %s %s", e.Verb, e.Object())
		}
	}
	for k, v := range w.resourceVersions() {
		if versions[k] != v {
			t.Errorf("%s changed: resourceVersion %s, was %s", k, v, versions[k])
		}
	}
}

// resourceVersions of the demo's Deployments, DaemonSets, ConfigMaps and
// Secrets, and of every CRD.
func (w *world) resourceVersions() map[string]string {
	w.t.Helper()
	out := map[string]string{}
	all := metav1.ListOptions{}
	ds, err := w.cs.AppsV1().Deployments("").List(w.ctx, all)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, o := range ds.Items {
		out["deployment "+o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	dss, err := w.cs.AppsV1().DaemonSets("").List(w.ctx, all)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, o := range dss.Items {
		out["daemonset "+o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	cms, err := w.cs.CoreV1().ConfigMaps("").List(w.ctx, all)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, o := range cms.Items {
		if !strings.HasPrefix(o.Name, "kube-") {
			out["configmap "+o.Namespace+"/"+o.Name] = o.ResourceVersion
		}
	}
	secrets, err := w.cs.CoreV1().Secrets("").List(w.ctx, all)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, o := range secrets.Items {
		out["secret "+o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	return out
}
