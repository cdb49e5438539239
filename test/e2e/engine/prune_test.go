package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// TestOldRunsArePruned: with --keep-runs 2, each finished run past the last
// two is deleted with its backups.
func TestOldRunsArePruned(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	keep := []string{"--keep-runs", "2"}
	for i, name := range []string{"shop-a", "shop-b"} {
		tag := "2.0." + string(rune('1'+i))
		w.mustExit(0, nil, append([]string{"apply", "-f", w.upgradePlan(planOptions{name: name, webTag: tag, agentTag: tag})}, keep...)...)
	}
	// Before the third run, shop-a is kept with its backups: what must go.
	if rec, backups := w.runSecrets("shop-a"); rec == 0 || backups == 0 {
		t.Fatalf("before pruning, run shop-a should have its record and backups: %d record(s), %d backup Secret(s)", rec, backups)
	}
	w.mustExit(0, nil, append([]string{"apply", "-f", w.upgradePlan(planOptions{name: "shop-c", webTag: "2.0.3", agentTag: "2.0.3"})}, keep...)...)

	r := w.mustExit(0, nil, "history", "-o", "json")
	var runs []v1alpha1.UpgradeRun
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
		t.Fatalf("decode history: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, run := range runs {
		names = append(names, run.Name)
	}
	if strings.Join(names, ",") != "shop-b,shop-c" {
		t.Errorf("history lists %v, want [shop-b shop-c]", names)
	}
	for _, gone := range []string{"shop-1.0.0", "shop-a"} {
		if rec, backups := w.runSecrets(gone); rec+backups != 0 {
			t.Errorf("pruned run %s left %d record(s) and %d backup Secret(s)", gone, rec, backups)
		}
		if n := w.sourceChunks(gone); n != 0 {
			t.Errorf("pruned run %s left %d source chunk(s)", gone, n)
		}
	}
	for _, kept := range []string{"shop-b", "shop-c"} {
		if n := w.sourceChunks(kept); n == 0 {
			t.Errorf("kept run %s has no source chunk", kept)
		}
	}
	for _, kept := range []string{"shop-b", "shop-c"} {
		if rec, backups := w.runSecrets(kept); rec != 1 || backups == 0 {
			t.Errorf("kept run %s: %d record(s), %d backup Secret(s)", kept, rec, backups)
		}
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.3")
}

// sourceChunks counts the Secrets that hold the run's sources.
func (w *world) sourceChunks(run string) int {
	w.t.Helper()
	list, err := w.cs.CoreV1().Secrets(runner.DefaultNamespace).List(w.ctx, metav1.ListOptions{
		LabelSelector: runstore.LabelRun + "=" + run, FieldSelector: "type=" + runstore.SourcesSecretType})
	if err != nil {
		w.t.Fatal(err)
	}
	return len(list.Items)
}

// runSecrets counts the objects in upshift-system labelled with the run:
// run records (UpgradeRuns) and backup chunks (and any other Secret
// carrying the label, counted as a record so it cannot hide).
func (w *world) runSecrets(run string) (records, backups int) {
	w.t.Helper()
	runs, err := w.dyn.Resource(v1alpha1.GroupVersion.WithResource(runstore.Resource)).Namespace(runner.DefaultNamespace).List(w.ctx, metav1.ListOptions{LabelSelector: runstore.LabelRun + "=" + run})
	if err != nil {
		w.t.Fatal(err)
	}
	records = len(runs.Items)
	seen := map[string]bool{}
	for _, key := range []string{runstore.LabelRun, backup.LabelRun} {
		list, err := w.cs.CoreV1().Secrets(runner.DefaultNamespace).List(w.ctx, metav1.ListOptions{LabelSelector: key + "=" + run})
		if err != nil {
			w.t.Fatal(err)
		}
		for _, s := range list.Items {
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			switch s.Type {
			case backup.SecretType:
				backups++
			case runstore.SourcesSecretType:
				// The run's sources: part of its record, kept and pruned
				// with it (checked by prunedWithSources).
			default:
				records++
			}
		}
	}
	return records, backups
}
