package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
