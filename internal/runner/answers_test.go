package runner

import (
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// A stage's write answers begin with its backup and serve its steps and
// gates until a step that writes otherwise than through the Applier, or
// a restore, starts: from then on the stage's gates list.
func TestAnswersLastWhileTheStagesWritesGoThroughTheApplier(t *testing.T) {
	c := kube.NewCache(nil)
	t.Cleanup(c.Close)
	plan := &v1alpha1.UpgradePlan{Spec: v1alpha1.UpgradePlanSpec{Stages: []v1alpha1.Stage{
		{Steps: []v1alpha1.Step{
			{Name: "web", Image: &v1alpha1.ImageStep{}},
			{Name: "settings", Manifests: &v1alpha1.ManifestsStep{}},
			{Name: "addon", Helm: &v1alpha1.HelmStep{}},
		}},
		{Steps: []v1alpha1.Step{{Name: "crds", CRDs: &v1alpha1.CRDsStep{}}}},
	}}}
	a := &actor{plan: &resolve.Plan{Plan: plan}, deps: &clients.Set{
		Cache: c, Waiter: kube.NewWaiter(nil, nil), Applier: kube.NewApplier(nil, nil)}}
	do := func(kind engine.Kind, stage, i int) *kube.Answers {
		a.scopeAnswers(engine.Action{Kind: kind, Stage: stage, Index: i})
		return a.answers.Load()
	}

	first := do(engine.Backup, 0, 0)
	if first == nil {
		t.Fatal("the stage's backup began no answers")
	}
	if d := a.withAnswers(); d.Waiter == a.deps.Waiter || d.Applier == a.deps.Applier {
		t.Error("a step's or gate's clients do not carry the stage's answers")
	}
	for _, act := range []engine.Action{{Kind: engine.RunStep}, {Kind: engine.RunStep, Index: 1}, {Kind: engine.CheckGate}} {
		if got := do(act.Kind, act.Stage, act.Index); got != first {
			t.Errorf("after %s the answers are %p, want the stage's %p", act, got, first)
		}
	}
	if got := do(engine.RunStep, 0, 2); got != nil {
		t.Error("the Helm step did not end the stage's answers")
	}
	if got := do(engine.RunStep, 0, 0); got != nil {
		t.Error("an image step after the Helm step brought answers back")
	}
	if a.withAnswers() != a.deps {
		t.Error("without answers, a gate's clients are not the run's")
	}
	second := do(engine.Backup, 1, 0)
	if second == nil || second == first {
		t.Errorf("the next stage's backup began answers %p, want new ones (the stage before's: %p)", second, first)
	}
	if got := do(engine.Restore, 1, 0); got != nil {
		t.Error("a restore did not end the stage's answers")
	}
}

// Without the run's Cache no wait reads answers: none are begun.
func TestNoAnswersWithoutTheRunsCache(t *testing.T) {
	a := &actor{plan: &resolve.Plan{Plan: &v1alpha1.UpgradePlan{Spec: v1alpha1.UpgradePlanSpec{Stages: []v1alpha1.Stage{{}}}}}, deps: &clients.Set{}}
	a.scopeAnswers(engine.Action{Kind: engine.Backup})
	if a.answers.Load() != nil {
		t.Error("answers begun for a run without its Cache")
	}
}
