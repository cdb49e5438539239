package apps

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// migrating runs the attempt's migration Job to its end.
func (x *decider) migrating() Decision {
	name := MigrationJobName(x.app, x.st.TargetVersion, x.st.Attempt)
	job := x.o.Migration
	if x.st.MigrationJob == "" {
		switch {
		case job != nil && x.ours(job.Annotations):
			x.st.MigrationJob = name // created before a crash or a refused save kept the status from saying so
		case job != nil:
			return x.fail(fmt.Sprintf("job %s exists and this attempt did not create it (%s): delete it, or retry so the next attempt runs its own", name, origin(job.Annotations)))
		}
	}
	if x.st.MigrationJob == "" {
		x.st.MigrationJob = name
		x.st.Message = fmt.Sprintf("migration Job %s runs (%s)", name, x.app.Spec.UpgradeStrategy.MigrationJob.Image)
		x.event(false, "MigrationStarted", "created migration Job "+name)
		return Decision{Action: CreateMigration, RequeueAfter: x.o.Poll}
	}
	if job == nil {
		return x.fail(fmt.Sprintf("migration Job %s is gone before it finished: retry to run the migration again", name))
	}
	if !x.ours(job.Annotations) {
		return x.fail(fmt.Sprintf("job %s is not this attempt's (%s)", name, origin(job.Annotations)))
	}
	switch c := jobEnd(job); {
	case c == nil:
		if x.overdue(x.st.PhaseStartedAt) {
			return x.fail(fmt.Sprintf("migration Job %s did not finish within %s (spec.progressDeadlineSeconds)", name, x.deadline()))
		}
		return Decision{RequeueAfter: x.o.Poll}
	case c.Type == batchv1.JobFailed:
		return x.fail(fmt.Sprintf("migration Job %s failed: %s (kubectl logs -n %s job/%s)", name, c.Message, x.app.Namespace, name))
	}
	x.event(false, "MigrationSucceeded", "migration Job "+name+" completed")
	x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppDeploying, &x.now
	x.st.Message = "migration " + name + " completed"
	return x.deploying()
}

// jobEnd is a Job's Complete or Failed condition, nil while it runs.
func jobEnd(j *batchv1.Job) *batchv1.JobCondition {
	for i, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// ours tells whether an object's annotations mark it as this attempt's.
func (x *decider) ours(annotations map[string]string) bool {
	return annotations[AnnotationAttempt] == attemptMark(x.app, x.st.Attempt)
}

// origin says who made an object, for messages.
func origin(annotations map[string]string) string {
	if m := annotations[AnnotationAttempt]; m != "" {
		return "made by " + m + " (rollout UID/attempt)"
	}
	return "not made by an AppRollout"
}

// deploying brings the new version in: at once (Rolling), or canary
// step by canary step.
func (x *decider) deploying() Decision {
	if blueGreen(x.app) != nil {
		if x.st.BlueGreen == nil {
			return x.fail("spec.upgradeStrategy became BlueGreen during the rollout: it is rolled back; the next starts blue-green")
		}
		return x.measuring(x.previewing())
	}
	if !canaryEnabled(x.app) {
		if d, wait := x.outsideWindow("the rolling update"); wait {
			return d
		}
		return x.promote(fmt.Sprintf("rolling update of deployment %s to %s", deploymentName(x.app), x.newImage()))
	}
	if x.o.Deployment == nil {
		return x.fail(fmt.Sprintf("deployment %s/%s was deleted during the rollout", x.app.Namespace, deploymentName(x.app)))
	}
	if firstImage(x.o.Deployment) == x.newImage() {
		// Promoted already: the save after the promotion was lost (a
		// crash, a refused write). Scaling the canary again would undo it.
		x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppHealthChecking, &x.now
		x.st.PauseStartedAt = nil
		x.stopAnalysis()
		return Decision{RequeueAfter: soon}
	}
	if why := x.routeMissing(); why != "" {
		return x.fail(why)
	}
	if routing(x.app) != nil && x.st.Traffic == nil {
		return x.fail("spec.upgradeStrategy.canary.trafficRouting was set during the rollout: it is rolled back; the next starts with the route")
	}
	if d, stop := x.canaryAnalysis(); stop {
		return d
	}
	return x.measuring(x.canaryStep())
}

// measuring makes d look again by the analysis's next measurement.
func (x *decider) measuring(d Decision) Decision {
	if next := x.nextMeasurement(); next > 0 && (d.RequeueAfter == 0 || next < d.RequeueAfter) {
		d.RequeueAfter = next
	}
	return d
}

// canaryEnabled tells whether the rollout moves in canary steps: with
// canary.enabled and steps, for type Canary and RollingWithMigration
// alike. The seed's README asks for exactly that (RollingWithMigration
// with canary steps), though its operator's code steps only for Canary;
// Rolling is one rolling update.
func canaryEnabled(app *v1alpha1.AppRollout) bool {
	s := app.Spec.UpgradeStrategy
	return s.Type != v1alpha1.StrategyRolling && s.Canary != nil && s.Canary.Enabled && len(s.Canary.Steps) > 0
}

// promote puts the new version on every replica of the stable
// Deployment, then waits for them in HealthChecking.
func (x *decider) promote(msg string) Decision {
	x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppHealthChecking, &x.now
	x.st.PauseStartedAt = nil
	if canaryEnabled(x.app) {
		x.st.CanaryWeight = 100
	}
	x.stopAnalysis()
	x.st.Message = msg
	x.event(false, "Deploying", msg)
	return Decision{Action: Deploy, Image: x.newImage(), RequeueAfter: x.o.Poll}
}

// healthChecking waits for every replica of the new version to be ready
// (a blue-green rollout, switched, goes on behind its preview first).
func (x *decider) healthChecking() Decision {
	if blueGreen(x.app) != nil && x.st.BlueGreen != nil && x.st.BlueGreen.SwitchedAt != nil {
		return x.measuring(x.switched())
	}
	if routing(x.app) != nil && x.st.Traffic != nil {
		return x.healthy(RouteBack)
	}
	return x.healthy(None)
}

// healthy waits for the Deployment to run the new version, ready, then
// ends the rollout with the action final.
func (x *decider) healthy(final Action) Decision {
	dep := x.o.Deployment
	if dep == nil {
		return x.fail(fmt.Sprintf("deployment %s/%s was deleted during the rollout", x.app.Namespace, deploymentName(x.app)))
	}
	want := x.newImage()
	if got := firstImage(dep); got != want {
		return x.fail(fmt.Sprintf("deployment %s runs %s, not %s: another writer changed it during the rollout", dep.Name, got, want))
	}
	h := health(dep)
	switch {
	case h.failed:
		return x.fail(fmt.Sprintf("deployment %s failed: %s", dep.Name, h.message))
	case !h.current:
		if x.overdue(x.st.PhaseStartedAt) {
			return x.fail(fmt.Sprintf("deployment %s was not ready within %s (spec.progressDeadlineSeconds): %s", dep.Name, x.deadline(), h.message))
		}
		x.st.Message = "waiting for deployment " + dep.Name + ": " + h.message
		return Decision{RequeueAfter: x.o.Poll}
	}
	x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppHealthy, &x.now
	x.st.CurrentVersion = x.st.TargetVersion
	x.st.CanaryStep, x.st.CanaryWeight = 0, 0
	x.st.CanaryStepStartedAt, x.st.PauseStartedAt = nil, nil
	x.st.Message = fmt.Sprintf("deployment %s runs %s: %d replicas ready", dep.Name, want, dep.Status.ReadyReplicas)
	x.event(false, "RolloutSucceeded", x.st.Message)
	return Decision{Action: final}
}

// firstImage is the image of a Deployment's first container.
func firstImage(d *appsv1.Deployment) string {
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return d.Spec.Template.Spec.Containers[0].Image
}
