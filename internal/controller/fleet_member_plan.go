package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
)

// Cluster API's kubeconfig Secret: <cluster>-kubeconfig, key value. A
// fleet of Cluster API clusters needs no kubeconfigSecretRef.
const (
	kubeconfigSuffix     = "-kubeconfig"
	kubeconfigDefaultKey = "value"
)

// healthStage names the stage a member's health checks run in when the
// fleet has no member plan.
const healthStage = "health-checks"

// kubeconfigRef is where a cluster's kubeconfig is: its
// kubeconfigSecretRef, or Cluster API's Secret.
func kubeconfigRef(c v1alpha1.FleetCluster) v1alpha1.KubeconfigSecretRef {
	ref := v1alpha1.KubeconfigSecretRef{Name: c.ID + kubeconfigSuffix, Key: kubeconfigDefaultKey}
	if r := c.KubeconfigSecretRef; r != nil {
		ref.Name = r.Name
		if r.Key != "" {
			ref.Key = r.Key
		}
	}
	return ref
}

// memberRunName names the member plan's run on every member cluster: one
// run per generation of the ClusterVersion, so a restarted controller,
// on any machine, finds the run it started, and an edit starts a new one
// (the runner refuses a run of one name with another plan). The hash
// keeps names of long or similar fleets apart and within a name's limits.
func memberRunName(cv *v1alpha1.ClusterVersion) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%s/%d", cv.Namespace, cv.Name, cv.Generation))
	name := cv.Name
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-.")
	}
	return "fleet-" + name + "-" + hex.EncodeToString(sum[:])[:10]
}

// memberPlan is the plan run on a member cluster: spec.member.plan with
// the health checks as gates of its last stage, so they hold after its
// last change and a failing one fails (and by default rolls back) the
// run. Without a plan, a stage of its own holds them: a stage needs a
// step, and a short pause is the one step that changes nothing.
func memberPlan(cv *v1alpha1.ClusterVersion, namespace, version string) *v1alpha1.UpgradePlan {
	m := cv.Spec.Member
	var spec v1alpha1.UpgradePlanSpec
	if m.Plan != nil {
		spec = *m.Plan.DeepCopy()
		if n := len(spec.Stages); n > 0 && len(m.HealthChecks) > 0 {
			spec.Stages[n-1].Gates = append(spec.Stages[n-1].Gates, m.HealthChecks...)
		}
	} else {
		spec = v1alpha1.UpgradePlanSpec{Version: version, Stages: []v1alpha1.Stage{{
			Name:  healthStage,
			Steps: []v1alpha1.Step{{Name: "settle", Pause: &v1alpha1.PauseStep{Duration: metav1.Duration{Duration: time.Second}}}},
			Gates: append([]v1alpha1.Gate(nil), m.HealthChecks...),
		}}}
	}
	return &v1alpha1.UpgradePlan{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.PlanKind},
		ObjectMeta: metav1.ObjectMeta{Name: memberRunName(cv), Namespace: namespace},
		Spec:       spec,
	}
}

// validateMember checks what the API server's schema cannot of
// spec.member: the plan as the engine validates it, and a kubeconfig
// Secret name for every cluster. Errors name the field and the fix.
func validateMember(cv *v1alpha1.ClusterVersion) error {
	if cv.Spec.Member == nil {
		return nil
	}
	var msgs []string
	for i, c := range cv.Spec.Clusters {
		if c.KubeconfigSecretRef != nil {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(c.ID + kubeconfigSuffix); len(errs) > 0 {
			msgs = append(msgs, fmt.Sprintf("spec.clusters[%d].kubeconfigSecretRef: cluster id %q makes no Secret name (%s): set kubeconfigSecretRef", i, c.ID, strings.Join(errs, ", ")))
		}
	}
	p := memberPlan(cv, "default", "0.0.0")
	for _, e := range plan.ValidateInCluster(p) {
		msg := e.Error()
		if cv.Spec.Member.Plan == nil {
			msg = strings.Replace(msg, "spec.stages[0].gates", "spec.member.healthChecks", 1)
		} else {
			msg = strings.Replace(msg, "spec.", "spec.member.plan.", 1)
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return nil
}
