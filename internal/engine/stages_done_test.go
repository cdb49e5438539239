package engine

import (
	"slices"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestStagesDoneAreOnlyThoseNoApplyRunsForwardAgain(t *testing.T) {
	const digest = "sha256:plan"
	run := func(phase v1alpha1.RunPhase, rollback bool, stages ...v1alpha1.Phase) *v1alpha1.UpgradeRun {
		r := &v1alpha1.UpgradeRun{}
		r.Spec.PlanDigest = digest
		r.Status.Phase = phase
		r.Status.RollbackRequested = rollback
		for _, p := range stages {
			r.Status.Stages = append(r.Status.Stages, v1alpha1.StageStatus{Phase: p})
		}
		return r
	}
	ok, running, pending := v1alpha1.PhaseSucceeded, v1alpha1.PhaseRunning, v1alpha1.PhasePending
	for _, c := range []struct {
		name   string
		run    *v1alpha1.UpgradeRun
		digest string
		want   []bool
	}{
		{"no run yet", nil, digest, nil},
		{"resumed: the succeeded stages", run(v1alpha1.RunRunning, false, ok, ok, running, pending), digest, []bool{true, true, false, false}},
		{"resumed with another plan", run(v1alpha1.RunRunning, false, ok, running), "sha256:other", nil},
		{"a rollback was asked for", run(v1alpha1.RunRunning, true, ok, running), digest, nil},
		{"rolling back", run(v1alpha1.RunRollingBack, false, ok, running), digest, nil},
		{"rolled back: --retry starts over", run(v1alpha1.RunRolledBack, false, v1alpha1.PhaseRolledBack, v1alpha1.PhaseRolledBack), digest, nil},
		{"failed", run(v1alpha1.RunFailed, false, ok, v1alpha1.PhaseFailed), digest, nil},
		{"reached its version", run(v1alpha1.RunSucceeded, false, ok, ok), digest, []bool{true, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := StagesDone(c.run, c.digest, nil); !slices.Equal(got, c.want) {
				t.Errorf("StagesDone = %v, want %v", got, c.want)
			}
		})
	}
}
