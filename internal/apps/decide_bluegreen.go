package apps

import (
	"fmt"
	"maps"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// LabelPodTemplateHash is the label the Deployment controller puts on a
// ReplicaSet's pods: pinned in the active Service's selector before the
// preview comes up, it keeps the new pods out of the active Service until
// the switch, as Argo Rollouts pins its rollouts-pod-template-hash.
const LabelPodTemplateHash = "pod-template-hash"

const trackPreview = "preview"

// DefaultScaleDownDelay is blueGreen.scaleDownDelaySeconds' default.
const DefaultScaleDownDelay = 30 * time.Second

func blueGreen(app *v1alpha1.AppRollout) *v1alpha1.AppBlueGreen {
	s := app.Spec.UpgradeStrategy
	if s.Type != v1alpha1.StrategyBlueGreen {
		return nil
	}
	return s.BlueGreen
}

// servicesMissing says which Service a blue-green rollout lacks ("" when
// none).
func (x *decider) servicesMissing() string {
	if why := x.routeMissing(); why != "" {
		return why
	}
	bg := blueGreen(x.app)
	switch {
	case bg == nil:
		return ""
	case x.o.ActiveService == nil:
		return fmt.Sprintf("service %s/%s not found: create it, or name the Service users reach in spec.upgradeStrategy.blueGreen.activeService", x.app.Namespace, bg.ActiveService)
	case bg.PreviewService != "" && x.o.PreviewService == nil:
		return fmt.Sprintf("service %s/%s not found: create it, or name another in spec.upgradeStrategy.blueGreen.previewService", x.app.Namespace, bg.PreviewService)
	}
	return ""
}

// startBlueGreen records the Services' selectors as the rollout found
// them: what they are switched back to.
func (x *decider) startBlueGreen() {
	x.st.BlueGreen = nil
	if blueGreen(x.app) == nil {
		return
	}
	x.st.BlueGreen = &v1alpha1.AppBlueGreenStatus{ActiveSelector: maps.Clone(x.o.ActiveService.Spec.Selector)}
	if x.o.PreviewService != nil {
		x.st.BlueGreen.PreviewSelector = maps.Clone(x.o.PreviewService.Spec.Selector)
	}
}

// previewSelector selects the preview's pods: the stable pods' labels as
// the active Service selected them, and the preview track.
func previewSelector(st *v1alpha1.AppBlueGreenStatus) map[string]string {
	sel := maps.Clone(st.ActiveSelector)
	if sel == nil {
		sel = map[string]string{}
	}
	sel[LabelTrack] = trackPreview
	return sel
}

// pinnedSelector is the active Service's selector before the switch: as
// found, plus the stable ReplicaSet's pod-template-hash.
func pinnedSelector(st *v1alpha1.AppBlueGreenStatus, hash string) map[string]string {
	return pinned(st.ActiveSelector, hash)
}

// pinned is a selector as found plus a ReplicaSet's pod-template-hash.
func pinned(found map[string]string, hash string) map[string]string {
	sel := maps.Clone(found)
	if sel == nil {
		sel = map[string]string{}
	}
	sel[LabelPodTemplateHash] = hash
	return sel
}

// previewing brings the new version up beside the old one, tries it
// (the pre-promotion analysis) and switches the active Service to it.
func (x *decider) previewing() Decision {
	if why := x.servicesMissing(); why != "" {
		return x.fail(why)
	}
	bg, st := blueGreen(x.app), x.st.BlueGreen
	where := fmt.Sprintf("preview deployment %s", previewName(x.app))
	if p := x.o.Preview; p != nil && !x.mine(p.Annotations) {
		return x.fail(fmt.Sprintf("deployment %s exists and this rollout did not create it (%s): rename it, or name this rollout's Deployment otherwise", p.Name, origin(p.Annotations)))
	}
	if st.PreviewReadyAt != nil && maps.Equal(x.o.ActiveService.Spec.Selector, previewSelector(st)) {
		// Switched already: the save after the switch was lost.
		st.SwitchedAt = &x.now
		x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppHealthChecking, &x.now
		return Decision{RequeueAfter: soon}
	}
	if !x.previewAt() {
		if x.o.StableHash == "" {
			x.st.Message = "waiting for the Deployment's ReplicaSet to pin the active Service to"
			return Decision{RequeueAfter: x.o.Poll}
		}
		x.st.Message = where + ": creating, " + x.newImage()
		return Decision{Action: SetPreview, Image: x.newImage(), RequeueAfter: x.o.Poll}
	}
	if st.PreviewReadyAt == nil {
		h := health(x.o.Preview)
		switch {
		case h.failed:
			return x.fail(fmt.Sprintf("%s failed: %s", where, h.message))
		case !h.current:
			if x.overdue(x.st.PhaseStartedAt) {
				return x.fail(fmt.Sprintf("%s not ready within %s (spec.progressDeadlineSeconds): %s", where, x.deadline(), h.message))
			}
			x.st.Message = where + ": waiting for its pods: " + h.message
			return Decision{RequeueAfter: x.o.Poll}
		}
		st.PreviewReadyAt = &x.now
		x.event(false, "PreviewReady", fmt.Sprintf("%s ready: %s", where, x.previewReach()))
	}
	if a := analysisFor(x.app, v1alpha1.AnalysisPrePromotion); a != nil {
		if d, stop := x.analyse(v1alpha1.AnalysisPrePromotion, a); stop {
			return d
		}
		if x.st.Analysis.Phase != v1alpha1.AnalysisSuccessful {
			x.st.Message = where + " ready; pre-promotion analysis running"
			return Decision{RequeueAfter: x.o.Poll}
		}
	}
	auto := bg.AutoPromotionEnabled == nil || *bg.AutoPromotionEnabled
	left := st.PreviewReadyAt.Add(time.Duration(bg.AutoPromotionSeconds) * time.Second).Sub(x.o.Now)
	if promoted := x.promoted(); !promoted && (!auto || left > 0) {
		if !auto {
			x.st.Message = fmt.Sprintf("%s ready (%s): upshift app promote switches service %s to it", where, x.previewReach(), bg.ActiveService)
			return Decision{}
		}
		x.st.Message = fmt.Sprintf("%s ready (%s): promoted in %s", where, x.previewReach(), left.Round(time.Second))
		return Decision{RequeueAfter: left}
	}
	if d, wait := x.outsideWindow("the switch of service " + bg.ActiveService); wait {
		return d
	}
	st.SwitchedAt = &x.now
	x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppHealthChecking, &x.now
	x.st.Message = fmt.Sprintf("service %s switched to %s", bg.ActiveService, x.newImage())
	x.event(false, "Promoted", x.st.Message)
	return Decision{Action: SwitchActive, RequeueAfter: soon}
}

// previewReach says where the preview is reached, for messages.
func (x *decider) previewReach() string {
	if bg := blueGreen(x.app); bg.PreviewService != "" {
		return "service " + bg.PreviewService + " selects it"
	}
	return "no preview service"
}

// previewAt tells whether the preview Deployment is this attempt's, at
// the new image and the rollout's replicas, and the Services pinned.
func (x *decider) previewAt() bool {
	p := x.o.Preview
	if p == nil || !x.ours(p.Annotations) || firstImage(p) != x.newImage() || replicasOf(p) != x.st.Replicas {
		return false
	}
	if x.o.ActiveService.Spec.Selector[LabelPodTemplateHash] == "" {
		return false
	}
	return x.o.PreviewService == nil || maps.Equal(x.o.PreviewService.Spec.Selector, previewSelector(x.st.BlueGreen))
}

// switched follows the promotion: the post-promotion analysis, the old
// version kept for the scale-down delay, then the Deployment updated
// behind the preview and the Services switched back to it.
func (x *decider) switched() Decision {
	bg, st := blueGreen(x.app), x.st.BlueGreen
	if why := x.servicesMissing(); why != "" {
		return x.fail(why)
	}
	if x.o.Deployment == nil {
		return x.fail(fmt.Sprintf("deployment %s/%s was deleted during the rollout", x.app.Namespace, deploymentName(x.app)))
	}
	if a := analysisFor(x.app, v1alpha1.AnalysisPostPromotion); a != nil {
		if d, stop := x.analyse(v1alpha1.AnalysisPostPromotion, a); stop {
			return d
		}
		if x.st.Analysis.Phase != v1alpha1.AnalysisSuccessful {
			x.st.Message = "switched; post-promotion analysis running"
			return Decision{RequeueAfter: x.o.Poll}
		}
	}
	delay := DefaultScaleDownDelay
	if bg.ScaleDownDelaySeconds != nil {
		delay = time.Duration(*bg.ScaleDownDelaySeconds) * time.Second
	}
	if left := st.SwitchedAt.Add(delay).Sub(x.o.Now); left > 0 {
		x.st.Message = fmt.Sprintf("switched to %s; the old version stays %s more (scaleDownDelaySeconds)", x.newImage(), left.Round(time.Second))
		return Decision{RequeueAfter: left}
	}
	if firstImage(x.o.Deployment) != x.newImage() {
		x.st.PhaseStartedAt = &x.now
		x.st.Message = "updating deployment " + deploymentName(x.app) + " behind the preview"
		return Decision{Action: Deploy, Image: x.newImage(), RequeueAfter: x.o.Poll}
	}
	return x.healthy(SwitchBack)
}
