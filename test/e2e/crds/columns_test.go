package crds_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/conditions"
	"github.com/upshift-dev/upshift/internal/engine"
)

// runAt is a run of p as the engine records it, moved on (every action
// succeeding) until the step stage/index has begun.
func runAt(p *v1alpha1.UpgradePlan, stage, index int) *v1alpha1.UpgradeRun {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := engine.NewRun(p, "sha256:demo", map[string]string{"spec.stages[0].steps[0].crds": "sha256:crds"}, now)
	r.Namespace = p.Namespace
	for {
		a := engine.Next(r)
		engine.Begin(r, a, now)
		if a.Kind == engine.RunStep && a.Stage == stage && a.Index == index {
			return r
		}
		engine.Complete(r, a, engine.Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"upshift-backup-x"}, SHA256: "abc", Objects: 1}}, now)
	}
}

// table GETs a resource in the Table form kubectl asks for, which the
// API server builds from the CRD's printer columns.
func table(t *testing.T, e *env, gvr schema.GroupVersionResource, name string) metav1.Table {
	t.Helper()
	cs, err := kubernetes.NewForConfig(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.CoreV1().RESTClient().Get().
		AbsPath("/apis", gvr.Group, gvr.Version, "namespaces", e.ns, gvr.Resource, name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(e.ctx).Raw()
	if err != nil {
		t.Fatalf("get %s %s as a Table: %v", gvr.Resource, name, err)
	}
	var tbl metav1.Table
	if err := json.Unmarshal(raw, &tbl); err != nil || tbl.Kind != "Table" {
		t.Fatalf("not a Table (%v): %s", err, raw)
	}
	return tbl
}

// The printer columns are served for both kinds: Version, Phase, Stage,
// Step, Age after the name, filled from the status the engine (for the
// run) and the conditions package (for the plan) write.
func TestPrinterColumns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, u := demoPlan(t, "1.1.0", e.ns)
	created, err := e.dyn.Resource(plans).Namespace(e.ns).Create(e.ctx, u, strict)
	if err != nil {
		t.Fatal(err)
	}
	run := runAt(p, 5, 2) // data-plane's ipam, after gateway-templates and fabric

	// The run record the engine keeps is a valid UpgradeRun; its status
	// goes through the status subresource.
	ru := toUnstructured(t, run)
	rc, err := e.dyn.Resource(runs).Namespace(e.ns).Create(e.ctx, ru, strict)
	if err != nil {
		t.Fatalf("the engine's run record refused as an UpgradeRun: %v", err)
	}
	ru.SetResourceVersion(rc.GetResourceVersion())
	if _, err := e.dyn.Resource(runs).Namespace(e.ns).UpdateStatus(e.ctx, ru, metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
		t.Fatalf("the engine's run status refused: %v", err)
	}

	plan := fromUnstructured[v1alpha1.UpgradePlan](t, created)
	conditions.SetPlanStatus(&plan.Status, plan.Generation, run, metav1.Now())
	if _, err := e.dyn.Resource(plans).Namespace(e.ns).UpdateStatus(e.ctx, toUnstructured(t, plan), metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
		t.Fatalf("update the plan's status: %v", err)
	}

	wantColumns := []string{"Name", "Version", "Phase", "Stage", "Step", "Age"}
	for _, gvr := range []schema.GroupVersionResource{plans, runs} {
		name := p.Name
		if gvr == runs {
			name = run.Name // keyed by the plan's namespace
		}
		tbl := table(t, e, gvr, name)
		var names []string
		for _, c := range tbl.ColumnDefinitions {
			names = append(names, c.Name)
		}
		if !reflect.DeepEqual(names, wantColumns) {
			t.Errorf("%s columns %v, want %v", gvr.Resource, names, wantColumns)
		}
		if len(tbl.Rows) != 1 || len(tbl.Rows[0].Cells) != len(wantColumns) {
			t.Fatalf("%s: %d rows, want 1 of %d cells: %+v", gvr.Resource, len(tbl.Rows), len(wantColumns), tbl.Rows)
		}
		got := fmt.Sprint(tbl.Rows[0].Cells[:5])
		if want := fmt.Sprint([]any{name, "1.1.0", "Running", "data-plane", "ipam"}); got != want {
			t.Errorf("%s row %s, want %s", gvr.Resource, got, want)
		}
	}
}
