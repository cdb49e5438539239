package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// The run record holds the plan redacted; a command on a saved run
// (retry, rollback) drives it with the plan as written, saved with its
// sources: retry checks the run's digests against it (the redacted plan
// would not match and be refused) and runs the failed gate again.
func TestRetryDrivesThePlanAsWritten(t *testing.T) {
	f := newFixture(t)
	const marker = "s3cr3t-runner"
	dir := t.TempDir()
	body := `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: secret-plan}
spec:
  version: "1"
  autoRollback: false
  stages:
  - name: config
    steps:
    - name: settings
      timeout: 20s
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: settings, namespace: ` + f.ns + `}
          data: {token: ` + marker + `}
    gates:
    - podsRunning: {namespace: ` + f.ns + `, selector: app=none}
      timeout: 1s
`
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := plan.Load(filepath.Join(dir, "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := resolve.Read(f.ctx, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.s.Apply(f.ctx, p, false)
	if err != nil || out.Run.Status.Phase != v1alpha1.RunFailed {
		t.Fatalf("apply: %v; want the run Failed at its gate, got %+v", err, out)
	}
	stored, err := f.s.Store().Get(f.ctx, "secret-plan")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(stored); strings.Contains(string(b), marker) {
		t.Fatalf("the stored run holds the secret: %s", b)
	}

	out, err = f.s.Retry(f.ctx, "secret-plan")
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	gate := out.Run.Status.Stages[0].Gates[0]
	if out.Run.Status.Phase != v1alpha1.RunFailed || gate.Attempts != 2 {
		t.Fatalf("after retry: run %s, gate %s after %d attempt(s); want the gate run again and failing", out.Run.Status.Phase, gate.Phase, gate.Attempts)
	}
	out, err = f.s.Rollback(f.ctx, "secret-plan")
	if err != nil || out.Run.Status.Phase != v1alpha1.RunRolledBack {
		t.Fatalf("rollback: %v, %+v", err, out)
	}
}
