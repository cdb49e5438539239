package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A plan whose invalid fields carry secrets is refused with messages that
// name each field and quote none of the secrets.
func TestValidationQuotesNoSecret(t *testing.T) {
	const marker = "s3cr3t-validation"
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.yaml")
	plan := strings.ReplaceAll(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: leaky}
spec:
  version: 1.0.0
  stages:
  - name: a
    steps:
    - name: src
      manifests: {url: "ftp://u:MARKER@127.0.0.1/m.yaml?token=MARKER"}
    - name: values
      helm: {release: r, namespace: n, chart: c, repo: "https://127.0.0.1/charts", values: ["MARKER"]}
    - name: repo
      helm: {release: r2, namespace: n, chart: c, repo: "ftp://bot:MARKER@127.0.0.1/?t=MARKER"}
    - name: archive
      helm: {release: r3, namespace: n, chart: "https://u:MARKER@/c.tgz?t=MARKER"}
    gates:
    - http: {url: "ftp://u:MARKER@127.0.0.1/healthz?token=MARKER"}
`, "MARKER", marker)
	if err := os.WriteFile(file, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	got := Validate(l).ToAggregate().Error()
	for _, want := range []string{
		"spec.stages[0].steps[0].manifests.url: Invalid value",
		"spec.stages[0].steps[1].helm.values: Invalid value",
		"spec.stages[0].steps[2].helm.repo: Invalid value",
		"spec.stages[0].steps[3].helm.chart: Invalid value",
		"spec.stages[0].gates[0].http.url: Invalid value",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, strings.ReplaceAll(got, ", ", "\n"))
		}
	}
	if strings.Contains(got, marker) {
		t.Errorf("validation quotes a secret:\n%s", strings.ReplaceAll(got, ", ", "\n"))
	}
}
