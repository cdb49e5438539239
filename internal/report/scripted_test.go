package report

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

var update = flag.Bool("update", false, "rewrite the golden Markdown reports in testdata")

// Run records are made the way the runner makes them: the engine's Driver
// drives a plan with a scripted actor and a clock that ticks a second per
// transition, so the records hold what real runs hold.

// platformPlan is a three-stage plan with gates of every severity.
func platformPlan(name, version string) *v1alpha1.UpgradePlan {
	manifests := func(path string) *v1alpha1.ManifestsStep {
		return &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Path: path}}
	}
	return &v1alpha1.UpgradePlan{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.UpgradePlanSpec{Version: version, Stages: []v1alpha1.Stage{
			{Name: "crds", Steps: []v1alpha1.Step{{Name: "widgets-crd", CRDs: &v1alpha1.CRDsStep{Source: v1alpha1.Source{Path: "crds.yaml"}}}}},
			{Name: "control-plane", Steps: []v1alpha1.Step{
				{Name: "manager", Manifests: manifests("manager.yaml")},
				{Name: "webhook", Manifests: manifests("webhook.yaml")},
			}, Gates: []v1alpha1.Gate{
				{Ready: &v1alpha1.ReadyGate{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "platform", Name: "manager"}},
				{Severity: v1alpha1.SeverityWarning, HTTP: &v1alpha1.HTTPGate{URL: "http://127.0.0.1:9090/metrics"}},
				{Severity: v1alpha1.SeverityInfo, PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "platform", Selector: "app=docs"}},
				{HTTP: &v1alpha1.HTTPGate{URL: "http://127.0.0.1:8080/healthz"}},
			}},
			{Name: "data-plane", Steps: []v1alpha1.Step{{Name: "proxy", Manifests: manifests("proxy.yaml")}},
				Gates: []v1alpha1.Gate{{NodesReady: &v1alpha1.NodesReadyGate{}}}},
		}},
	}
}

// Actions the scripted actor fails, by engine.Action.String().
const (
	healthGate   = "gate 1/3"
	metricsGate  = "gate 1/1"
	docsGate     = "gate 1/2"
	proxyStep    = "step 2/0"
	restoreCtrl  = "restore 1"
	restoreCRDs  = "restore 0"
	restoreProxy = "restore 2"
)

// script says which actions fail, and with which message.
type script map[string]string

type actor struct{ fail script }

func (a actor) Act(_ context.Context, _ *v1alpha1.UpgradeRun, act engine.Action) (engine.Outcome, error) {
	msg, failed := a.fail[act.String()]
	switch act.Kind {
	case engine.Backup:
		return engine.Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b-" + act.String()}, Objects: 2, Absent: 1}}, nil
	case engine.Restore:
		rb := &v1alpha1.Rollback{Restored: 2, Deleted: 1}
		if act.Stage == 0 {
			rb.Kept = []string{"customresourcedefinition widgets.example.com"}
		}
		if failed {
			rb.Differences = []string{msg}
			return engine.Outcome{OK: false, Message: "1 object differs from its snapshot", Rollback: rb}, nil
		}
		return engine.Outcome{OK: true, Rollback: rb}, nil
	}
	if failed {
		return engine.Outcome{OK: false, Message: msg}, nil
	}
	return engine.Outcome{OK: true}, nil
}

type saver struct{}

func (saver) Save(context.Context, *v1alpha1.UpgradeRun) error { return nil }

// clock ticks a second per reading, from start.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// drive runs plan p from version from to its end with fail's failures,
// its clock starting at start, and returns the record.
func drive(t *testing.T, p *v1alpha1.UpgradePlan, from string, start time.Time, fail script) *v1alpha1.UpgradeRun {
	t.Helper()
	c := &clock{t: start}
	r := engine.NewRun(p, "sha256:"+p.Name, nil, c.now())
	r.Spec.FromVersion = from
	d := &engine.Driver{Actor: actor{fail: fail}, Saver: saver{}, Now: c.now}
	if err := d.Drive(context.Background(), r); err != nil {
		t.Fatalf("drive %s: %v", p.Name, err)
	}
	return r
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/report -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the report rendered now (go test ./internal/report -update rewrites it after an intended change):\n%s", path, got)
	}
}
