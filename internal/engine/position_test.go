package engine

import (
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestPosition(t *testing.T) {
	step := func(name string, p v1alpha1.Phase) v1alpha1.StepStatus {
		return v1alpha1.StepStatus{Name: name, Phase: p}
	}
	const (
		pending   = v1alpha1.PhasePending
		running   = v1alpha1.PhaseRunning
		succeeded = v1alpha1.PhaseSucceeded
		failed    = v1alpha1.PhaseFailed
	)
	cancelled := step("ipam", failed)
	cancelled.Message = cancelledMessage
	for _, tc := range []struct {
		name        string
		run         v1alpha1.RunPhase
		stages      []v1alpha1.StageStatus
		stage, step string
	}{
		{name: "not started", run: v1alpha1.RunRunning,
			stages: []v1alpha1.StageStatus{{Name: "crds", Phase: pending, Steps: []v1alpha1.StepStatus{step("crds", pending)}}}},
		{name: "backing up", run: v1alpha1.RunRunning, stage: "crds",
			stages: []v1alpha1.StageStatus{{Name: "crds", Phase: v1alpha1.PhaseBackingUp, Steps: []v1alpha1.StepStatus{step("crds", pending)}}}},
		{name: "steps side by side", run: v1alpha1.RunRunning, stage: "data-plane", step: "ipam,proxy",
			stages: []v1alpha1.StageStatus{
				{Name: "crds", Phase: succeeded, Steps: []v1alpha1.StepStatus{step("crds", succeeded)}},
				{Name: "data-plane", Phase: running, Steps: []v1alpha1.StepStatus{step("fabric", succeeded), step("ipam", running), step("proxy", running)}},
			}},
		{name: "gating", run: v1alpha1.RunRunning, stage: "crds", step: "ready crds",
			stages: []v1alpha1.StageStatus{{Name: "crds", Phase: v1alpha1.PhaseGating, Steps: []v1alpha1.StepStatus{step("crds", succeeded)}, Gates: []v1alpha1.StepStatus{step("ready crds", running)}}}},
		{name: "failed, a sibling cancelled", run: v1alpha1.RunFailed, stage: "data-plane", step: "proxy",
			stages: []v1alpha1.StageStatus{{Name: "data-plane", Phase: failed, Steps: []v1alpha1.StepStatus{cancelled, step("proxy", failed)}}}},
		{name: "restoring", run: v1alpha1.RunRollingBack, stage: "crds",
			stages: []v1alpha1.StageStatus{
				{Name: "crds", Phase: v1alpha1.PhaseRollingBack, Steps: []v1alpha1.StepStatus{step("crds", succeeded)}},
				{Name: "data-plane", Phase: v1alpha1.PhaseRolledBack, Steps: []v1alpha1.StepStatus{step("proxy", failed)}},
			}},
		{name: "rolled back: where it failed", run: v1alpha1.RunRolledBack, stage: "data-plane", step: "proxy",
			stages: []v1alpha1.StageStatus{
				{Name: "crds", Phase: v1alpha1.PhaseRolledBack, Steps: []v1alpha1.StepStatus{step("crds", succeeded)}},
				{Name: "data-plane", Phase: v1alpha1.PhaseRolledBack, Steps: []v1alpha1.StepStatus{step("proxy", failed)}},
			}},
		{name: "succeeded", run: v1alpha1.RunSucceeded,
			stages: []v1alpha1.StageStatus{{Name: "crds", Phase: succeeded, Steps: []v1alpha1.StepStatus{step("crds", succeeded)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := v1alpha1.RunStatus{Phase: tc.run, Stages: tc.stages}
			if stage, step := Position(&st); stage != tc.stage || step != tc.step {
				t.Errorf("Position = %q, %q; want %q, %q", stage, step, tc.stage, tc.step)
			}
		})
	}
}
