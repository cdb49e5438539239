package apps

import (
	"fmt"
	"strings"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// canaryStep moves the canary through its steps: each step's replicas
// set, its pods ready, its pause held (or ended by upshift.dev/promote),
// then the next; a step of weight 100, or the end, promotes.
func (x *decider) canaryStep() Decision {
	steps := x.app.Spec.UpgradeStrategy.Canary.Steps
	i := int(x.st.CanaryStep)
	if i >= len(steps) || steps[i].Weight >= 100 {
		if d, wait := x.outsideWindow("the promotion"); wait {
			return d
		}
		return x.promote(fmt.Sprintf("canary promoted: deployment %s to %s on all %d replicas", deploymentName(x.app), x.newImage(), x.st.Replicas))
	}
	step := steps[i]
	canary, stable := split(x.st.Replicas, step.Weight)
	if routing(x.app) != nil {
		stable = x.st.Replicas // the route weighs the traffic; the stable version keeps its pods
	}
	if c := x.o.Canary; c != nil && !x.mine(c.Annotations) {
		return x.fail(fmt.Sprintf("deployment %s exists and this rollout did not create it (%s): rename it, or name this rollout's Deployment otherwise", c.Name, origin(c.Annotations)))
	}
	if routing(x.app) != nil && x.o.StableHash == "" {
		x.st.Message = where(i, len(steps), step.Weight, canary, stable) + ": waiting for the Deployment's ReplicaSet to pin the stable Service to"
		return Decision{RequeueAfter: x.o.Poll}
	}
	if x.st.CanaryStepStartedAt == nil && !x.canaryAt(canary, stable) {
		if d, wait := x.outsideWindow(fmt.Sprintf("canary step %d", i+1)); wait {
			return d
		}
	}
	x.st.CanaryWeight = step.Weight
	where := where(i, len(steps), step.Weight, canary, stable)
	if !x.canaryAt(canary, stable) {
		if x.st.CanaryStepStartedAt == nil {
			x.st.CanaryStepStartedAt = &x.now
		}
		x.st.PauseStartedAt = nil
		x.st.Message = where + ": scaling"
		return Decision{Action: SetCanary, Image: x.newImage(), CanaryReplicas: canary, StableReplicas: stable, RequeueAfter: x.o.Poll}
	}
	if x.st.PauseStartedAt == nil {
		h := health(x.o.Canary)
		switch {
		case h.failed:
			return x.fail(fmt.Sprintf("%s: canary deployment %s failed: %s", where, x.o.Canary.Name, h.message))
		case !h.current:
			if x.overdue(x.st.CanaryStepStartedAt) {
				return x.fail(fmt.Sprintf("%s: canary pods not ready within %s (spec.progressDeadlineSeconds): %s", where, x.deadline(), h.message))
			}
			x.st.Message = where + ": waiting for the canary pods: " + h.message
			return Decision{RequeueAfter: x.o.Poll}
		}
		if routing(x.app) != nil && !x.weighedAt(step.Weight) {
			x.st.Message = where + ": the canary pods are ready; moving the route's weight"
			return Decision{Action: SetWeights, Weight: step.Weight, RequeueAfter: soon}
		}
		x.st.PauseStartedAt = &x.now
		x.event(false, "CanaryStep", fmt.Sprintf("%s: ready; holding %ds", where, step.Pause))
	}
	if step.UntilPromoted {
		if !x.promoted() {
			// Nothing to look again for: the promote annotation wakes it
			// (and the analysis, if any, its measurements).
			x.st.Message = where + ": holding until promoted (upshift app promote)"
			return Decision{}
		}
		x.st.CanaryStep++
		x.st.CanaryStepStartedAt, x.st.PauseStartedAt = nil, nil
		return x.canaryStep()
	}
	pause := time.Duration(step.Pause) * time.Second
	left := x.st.PauseStartedAt.Add(pause).Sub(x.o.Now)
	if promoted := x.promoted(); left > 0 && !promoted {
		x.st.Message = fmt.Sprintf("%s: holding, %s left (annotate upshift.dev/promote to go on)", where, left.Round(time.Second))
		return Decision{RequeueAfter: left}
	}
	x.st.CanaryStep++
	x.st.CanaryStepStartedAt, x.st.PauseStartedAt = nil, nil
	return x.canaryStep()
}

// where says which step a canary is at, for messages.
func where(i, n int, weight, canary, stable int32) string {
	return fmt.Sprintf("canary step %d/%d, weight %d%% (%d canary, %d stable)", i+1, n, weight, canary, stable)
}

// mine tells whether an object's annotations mark it as made by an
// attempt of this rollout (this one or an earlier one).
func (x *decider) mine(annotations map[string]string) bool {
	return strings.HasPrefix(annotations[AnnotationAttempt], string(x.app.UID)+"/")
}

// canaryAt tells whether the canary Deployment is this attempt's, at the
// new image and size, and the stable one at its size.
func (x *decider) canaryAt(canary, stable int32) bool {
	c, s := x.o.Canary, x.o.Deployment
	return c != nil && x.ours(c.Annotations) && replicasOf(c) == canary && firstImage(c) == x.newImage() &&
		s != nil && replicasOf(s) == stable && x.servicesAt()
}

// split is a weight's canary and stable replicas out of total: the
// canary ceil(total × weight / 100), at least one for any weight above
// 0; the stable the rest, but never below one before promotion, so the
// version that works keeps serving.
func split(total, weight int32) (canary, stable int32) {
	canary = (total*weight + 99) / 100
	if weight > 0 && canary < 1 {
		canary = 1
	}
	stable = total - canary
	if stable < 1 {
		stable = 1
	}
	return canary, stable
}

// promoted tells whether upshift.dev/promote has a value not yet acted
// on, and marks it handled.
func (x *decider) promoted() bool {
	return x.take(v1alpha1.AnnotationPromote)
}
