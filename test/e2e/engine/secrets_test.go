package engine_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// secretsServer serves, on 127.0.0.1, what the planted plan fetches, each
// only to a client that presents the marker as the URL's credentials: a
// manifests source (token in the query), a chart repository (user info
// and a token) and a health endpoint (both), healthy when told.
type secretsServer struct {
	*httptest.Server
	healthy atomic.Bool
}

func newSecretsServer(t *testing.T, marker, chartDir string) *secretsServer {
	t.Helper()
	s := &secretsServer{}
	authorized := func(r *http.Request) bool {
		_, pw, ok := r.BasicAuth()
		return ok && pw == marker && r.URL.Query().Get("token") == marker
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/settings.yaml", func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("token") != marker {
			http.Error(rw, "no token", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(rw, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: vault}\ndata: {level: \"2\"}\n")
	})
	charts := http.StripPrefix("/charts/", http.FileServer(http.Dir(chartDir)))
	mux.HandleFunc("/charts/", func(rw http.ResponseWriter, r *http.Request) {
		if !authorized(r) {
			http.Error(rw, "who are you", http.StatusUnauthorized)
			return
		}
		charts.ServeHTTP(rw, r)
	})
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case !authorized(r):
			http.Error(rw, "who are you", http.StatusUnauthorized)
		case !s.healthy.Load():
			http.Error(rw, "not yet", http.StatusServiceUnavailable)
		default:
			fmt.Fprint(rw, "ok")
		}
	})
	s.Server = httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(s.Close)
	return s
}

// withCreds is the server's URL for path with the marker as password and
// as token.
func (s *secretsServer) withCreds(marker, path string) string {
	return strings.Replace(s.URL, "http://", "http://probe:"+marker+"@", 1) + path + "?token=" + marker
}

// writeVaultChart packages the chart vault-addon 1.0.0 into a chart
// repository directory: a Secret rendered from two values (one inline,
// one from a values file) and a ConfigMap labelled with the value tier. The index names the archive
// relatively, so Helm fetches it with the repository's credentials.
func writeVaultChart(t *testing.T, repoDir string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "vault-addon")
	if err := os.MkdirAll(filepath.Join(src, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "Chart.yaml"), "apiVersion: v2\nname: vault-addon\nversion: 1.0.0\n")
	write(t, filepath.Join(src, "values.yaml"), "password: \"\"\napiToken: \"\"\n")
	write(t, filepath.Join(src, "templates", "secret.yaml"), `apiVersion: v1
kind: Secret
metadata: {name: {{ .Release.Name }}-creds}
stringData:
  password: {{ .Values.password | quote }}
  apiToken: {{ .Values.apiToken | quote }}
`)
	write(t, filepath.Join(src, "templates", "config.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-config, labels: {tier: {{ .Values.tier | default \"safe\" | quote }}}}\ndata: {mode: safe}\n")
	ch, err := helmx.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chartutil.Save(ch, repoDir); err != nil {
		t.Fatal(err)
	}
	idx, err := repo.IndexDirectory(repoDir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(repoDir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// indent puts n spaces before every line of s.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pad) + "\n"
}

// badLabelPlan upgrades the add-on with a tier value the API server
// refuses as a label, quoting it in its error.
func badLabelPlan(t *testing.T, srv *secretsServer, marker string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	write(t, path, `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: vault-1.0.1}
spec:
  version: 1.0.1
  allowInsecureHTTP: true # its test server is http://127.0.0.1
  stages:
  - name: addons
    steps:
    - name: addon
      timeout: 30s
      helm:
        release: vault-addon
        namespace: vault
        chart: vault-addon
        repo: "`+srv.withCreds(marker, "/charts/")+`"
        version: 1.0.0
        values: {tier: "`+marker+` is no label!"}
`)
	return path
}

// refusedPlans writes two plans refused before anything changes, each
// with marker where its message could quote it: one invalid (URLs that are
// not http(s), values that are not a map), one whose chart's schema
// refuses a value (Helm quotes the value that does not match a pattern).
func refusedPlans(t *testing.T, marker string) (invalid, schema string) {
	t.Helper()
	dir := t.TempDir()
	invalid = filepath.Join(dir, "invalid.yaml")
	write(t, invalid, strings.ReplaceAll(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: vault-invalid}
spec:
  version: 1.0.0
  stages:
  - name: a
    steps:
    - name: src
      manifests: {url: "ftp://u:MARKER@127.0.0.1/m.yaml?token=MARKER"}
    - name: values
      helm: {release: r, namespace: vault, chart: "https://u:MARKER@/c.tgz?t=MARKER", values: ["MARKER"]}
    gates:
    - http: {url: "ftp://u:MARKER@127.0.0.1/healthz?token=MARKER"}
`, "MARKER", marker))
	chart := filepath.Join(dir, "guarded")
	if err := os.MkdirAll(filepath.Join(chart, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(chart, "Chart.yaml"), "apiVersion: v2\nname: guarded\nversion: 1.0.0\n")
	write(t, filepath.Join(chart, "values.schema.json"), `{"type": "object", "properties": {"password": {"type": "string", "pattern": "^[0-9]+$"}}}`)
	write(t, filepath.Join(chart, "templates", "config.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guarded}\ndata: {mode: safe}\n")
	schema = filepath.Join(dir, "schema.yaml")
	write(t, schema, `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: vault-schema}
spec:
  version: 1.0.0
  stages:
  - name: a
    steps:
    - name: guarded
      helm: {release: guarded, namespace: vault, chart: guarded, values: {password: "`+marker+`-pattern"}}
`)
	return invalid, schema
}

// secretsPlan writes a plan with marker planted everywhere a plan may
// carry a secret: an inline crds source, an inline manifests source with
// a Secret, a manifests URL with a token, an inline Job with a secret env
// value, a Helm chart repository with user info and a token, a Helm value
// and a values file, and an http gate with user info and a token.
func secretsPlan(t *testing.T, srv *secretsServer, marker string) string {
	t.Helper()
	dir := t.TempDir()
	crds := `# the vault's CRD; token ` + marker + `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: vaults.secrets.upshift.dev}
spec:
  group: secrets.upshift.dev
  names: {kind: Vault, plural: vaults, singular: vault}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`
	creds := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: vault}\nstringData: {password: " + marker + "-new}\n"
	job := `apiVersion: batch/v1
kind: Job
metadata: {name: vault-migrate, namespace: vault}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: example.com/vault/migrate:1.0.0
        env: [{name: DB_PASSWORD, value: ` + marker + `-env}]
`
	write(t, filepath.Join(dir, "vault-values.yaml"), "apiToken: "+marker+"-file\nunused: "+marker+"-unused\n")
	plan := `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: vault-1.0.0}
spec:
  version: 1.0.0
  allowInsecureHTTP: true # its test server is http://127.0.0.1
  stages:
  - name: crds
    steps:
    - name: crds
      crds:
        inline: |
` + indent(crds, 10) + `  - name: config
    steps:
    - name: creds
      manifests:
        inline: |
` + indent(creds, 10) + `    - name: settings
      manifests: {url: "` + srv.withCreds(marker, "/settings.yaml") + `"}
    - name: migrate
      job:
        inline: |
` + indent(job, 10) + `  - name: addons
    steps:
    - name: addon
      helm:
        release: vault-addon
        namespace: vault
        chart: vault-addon
        repo: "` + srv.withCreds(marker, "/charts/") + `"
        version: 1.0.0
        valuesFiles: [vault-values.yaml]
        values: {password: "` + marker + `-value"}
    gates:
    - http: {url: "` + srv.withCreds(marker, "/healthz") + `", expectStatus: 200, interval: 200ms, timeout: 2s}
`
	path := filepath.Join(dir, "plan.yaml")
	write(t, path, plan)
	return path
}

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
