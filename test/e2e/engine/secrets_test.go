package engine_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// TestNoSecretInAnyOutput: plans refused by validation and by a chart's
// schema; then a plan full of planted secrets through plan, a failing
// apply (its gate answers 503: rolled back), apply -o json|yaml, a retried
// apply that succeeds, status, history and backups in every output format;
// then a Helm upgrade the API server refuses, quoting a value. The marker
// appears in no output, and in no message of the run records kept in the
// cluster. The preview shows the Secret whose value changes to one of the
// same length as an update, both sides redacted.
func TestNoSecretInAnyOutput(t *testing.T) {
	t.Parallel()
	marker := "s3cr3t-" + rand.String(10)
	w := newWorld(t, localcluster.Options{})
	chartDir := t.TempDir()
	writeVaultChart(t, chartDir)
	srv := newSecretsServer(t, marker, chartDir)
	plan := secretsPlan(t, srv, marker)
	helmHome := t.TempDir()
	env := []string{"HELM_CACHE_HOME=" + filepath.Join(helmHome, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(helmHome, "config"), "HELM_DATA_HOME=" + filepath.Join(helmHome, "data")}

	// The live Secret holds a value of the same length as the plan's.
	if _, err := w.cs.CoreV1().Namespaces().Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "vault"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "vault"}, Data: map[string][]byte{"password": []byte(marker + "-old")}}
	if _, err := w.cs.CoreV1().Secrets("vault").Create(w.ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var all []string // every output, labelled
	run := func(code int, args ...string) result {
		t.Helper()
		r := w.mustExit(code, env, args...)
		all = append(all, "$ upshift "+strings.Join(args, " ")+"\n"+r.stdout+r.stderr)
		return r
	}

	invalid, schema := refusedPlans(t, marker)
	inv := run(1, "plan", "-f", invalid)
	mustContain(t, "invalid plan", inv.stderr, "spec.stages[0].steps[0].manifests.url: Invalid value", "spec.stages[0].gates[0].http.url: Invalid value", "spec.stages[0].steps[1].helm.values: Invalid value")
	sch := run(1, "plan", "-f", schema)
	mustContain(t, "plan refused by the chart's schema", sch.stderr, "spec.stages[0].steps[0].helm.chart", "does not render", "<redacted>")

	pv := run(0, "plan", "-f", plan)
	n := len(marker + "-new")
	mustContain(t, "plan output", pv.stdout,
		"update secret vault/creds",
		fmt.Sprintf("-  password: <redacted %d bytes (before)>", n),
		fmt.Sprintf("+  password: <redacted %d bytes (after)>", n),
		"create secret vault/vault-addon-creds",
		"apply manifests from http://xxxxx@127.0.0.1:",
		"gate http http://xxxxx@127.0.0.1:")
	run(0, "plan", "-f", plan, "-o", "json")

	// Killed mid-run, the run is kept without its secrets; apply resumes
	// it (and fails at the gate, rolls back).
	killed := w.upshift(append([]string{runner.KillAfterTransitionEnv + "=3"}, env...), append([]string{"apply", "-f", plan}, fastLease...)...)
	all = append(all, "$ upshift apply (killed)\n"+killed.stdout+killed.stderr)
	if killed.code != -9 {
		t.Fatalf("kill after transition 3: want SIGKILL, got %s", killed)
	}
	w.assertNoSecretInRuns(marker)
	failed := run(2, append([]string{"apply", "-f", plan}, fastLease...)...)
	mustContain(t, "failing apply", failed.stdout+failed.stderr, "resuming run vault-1.0.0", "/healthz?xxxxx did not answer 200", "rolled back")
	run(2, "apply", "-f", plan, "-o", "json")
	run(2, "apply", "-f", plan, "-o", "yaml")
	srv.healthy.Store(true)
	run(0, "apply", "-f", plan, "--retry", "-o", "json")
	run(0, "apply", "-f", plan, "-o", "yaml")
	run(0, "apply", "-f", plan)

	st := run(0, "status", "vault-1.0.0", "-o", "yaml")
	mustContain(t, "status -o yaml", st.stdout, "<inline, ", "password: <redacted>", "xxxxx@127.0.0.1")
	run(0, "status")
	run(0, "status", "-o", "json")
	run(0, "history")
	run(0, "history", "-o", "json")
	run(0, "history", "-o", "yaml")
	run(0, "backup", "list")
	show := run(0, "backup", "show", "vault-1.0.0")
	mustContain(t, "backup show", show.stdout, "password: <redacted")
	run(0, "backup", "show", "vault-1.0.0", "-o", "json")

	// A Helm error that quotes a value (the API server refusing a label
	// rendered from one) is stored and shown without it.
	bad := run(2, "apply", "-f", badLabelPlan(t, srv, marker))
	mustContain(t, "apply of the bad label", bad.stdout+bad.stderr, "metadata.labels", "<redacted>")
	run(0, "status", "vault-1.0.1")

	for _, out := range all {
		// The first 12 base64 characters encode the marker's first 9
		// bytes: they show a Secret's data value leaking, whatever follows.
		if strings.Contains(out, marker) || strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(marker))[:12]) {
			t.Errorf("an output shows the secret %s:\n%s", marker, out)
		}
	}

	// Whoever may read upgraderuns sees none of it.
	w.assertNoSecretInRuns(marker)

	// Messages are clean where they are stored, not only where printed.
	assertNoSecretStored(t, w, marker)
}

// assertNoSecretStored fails if marker shows in the stored status of the
// runs, or the status lacks what stands in for it.
func assertNoSecretStored(t *testing.T, w *world, marker string) {
	for name, want := range map[string]string{"vault-1.0.0": "xxxxx@127.0.0.1", "vault-1.0.1": "<redacted>"} {
		store, err := runstore.New(w.c.RESTConfig(), runner.DefaultNamespace)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := store.Get(w.ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(stored.Status); err != nil {
			t.Fatal(err)
		}
		status := b.String()
		if strings.Contains(status, marker) {
			t.Errorf("the stored status of run %s holds the secret:\n%s", name, status)
		}
		if !strings.Contains(status, want) {
			t.Errorf("the stored status of run %s lacks %q:\n%s", name, want, status)
		}
	}
}

// assertNoSecretInRuns fails if marker shows in the UpgradeRuns, as kubectl
// and a dynamic client read them.
func (w *world) assertNoSecretInRuns(marker string) {
	w.t.Helper()
	list, err := w.dyn.Resource(v1alpha1.GroupVersion.WithResource(runstore.Resource)).Namespace(runner.DefaultNamespace).List(w.ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	if len(list.Items) == 0 {
		w.t.Fatal("no UpgradeRun in " + runner.DefaultNamespace)
	}
	b, err := list.MarshalJSON()
	if err != nil {
		w.t.Fatal(err)
	}
	if strings.Contains(string(b), marker) {
		w.t.Errorf("an UpgradeRun holds the secret %s:\n%s", marker, b)
	}
	cmd := exec.CommandContext(w.ctx, w.c.Binaries().Path("kubectl"), "--kubeconfig", w.c.KubeconfigPath(), "get", "upgraderuns", "-n", runner.DefaultNamespace, "-o", "yaml")
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("kubectl get upgraderuns -o yaml: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kind: UpgradeRun") || strings.Contains(string(out), marker) || strings.Contains(string(out), base64.StdEncoding.EncodeToString([]byte(marker))[:12]) {
		w.t.Errorf("kubectl get upgraderuns -o yaml shows the secret %s, or no run:\n%s", marker, out)
	}
}
