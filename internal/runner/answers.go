package runner

import (
	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/steps"
)

// A gate after a stage's ApplierOnly steps (image, manifests, crds)
// fences on the answers to their writes (kube.Answers) instead of a
// consistent list of its object. kube does not know stages: the actor scopes the answers, a
// fresh set when a stage's backup runs, and none from the moment a step
// that writes otherwise than through the Applier, or a restore, starts
// in the stage: those writes leave no answer, so the gates list again.

// scopeAnswers sets the answers the action's steps record into and its
// gates fence on. Without the run's Cache no wait would read them.
func (a *actor) scopeAnswers(act engine.Action) {
	if a.deps.Cache == nil {
		return
	}
	switch act.Kind {
	case engine.Backup:
		a.answers.Store(kube.NewAnswers())
	case engine.RunStep:
		if !writesOnlyThroughApplier(a.plan.Plan.Spec.Stages[act.Stage].Steps[act.Index]) {
			a.answers.Store(nil)
		}
	case engine.Restore:
		a.answers.Store(nil)
	}
}

// withAnswers is the run's clients with the stage's answers, for a step
// to record into and a gate to fence on; a.deps itself holds none.
func (a *actor) withAnswers() *clients.Set {
	ans := a.answers.Load()
	if ans == nil {
		return a.deps
	}
	return a.deps.WithAnswers(ans)
}

// writesOnlyThroughApplier tells the steps whose every write goes through
// the run's kube.Applier, so that its answers are their last writes, as
// their kinds declare (step.Traits.ApplierOnly). Any other step ends the
// stage's answers.
func writesOnlyThroughApplier(s v1alpha1.Step) bool {
	return steps.TraitsOf(s).ApplierOnly
}
