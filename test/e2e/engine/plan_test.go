package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// TestPlanAgainstTheCluster: on a cluster running demo 1.0.0, `upshift
// plan` for 1.1.0 passes preflight, lists what each step will touch, and
// writes nothing (the audit log shows only access reviews by its user).
func TestPlanAgainstTheCluster(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	demo := filepath.Join(repoRoot(), "examples", "demo")
	w.mustExit(0, nil, "apply", "-f", filepath.Join(demo, "1.0.0", "plan.yaml"))
	writes := len(w.upshiftWrites())
	r := w.mustExit(0, nil, "plan", "-f", filepath.Join(demo, "1.1.0", "plan.yaml"))
	mustContain(t, "plan output", r.stdout,
		"plan demo-1.1.0: target version 1.1.0",
		"touches customresourcedefinition gatewaytemplates.networking.demo.upshift.dev",
		"touches deployment demo-system/demo-controller-manager",
		"touches job demo-system/demo-migrate-1-1-0",
		"step approve: wait for `upshift approve`",
		"preflight passed: nothing was changed")
	if after := w.upshiftWrites(); len(after) != writes {
		for _, e := range after[writes:] {
			t.Errorf("plan wrote: %s %s", e.Verb, e.Object())
		}
	}
}
