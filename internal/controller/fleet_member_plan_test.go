package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
)

func memberFleet(m *v1alpha1.FleetMemberSpec, ids ...string) *v1alpha1.ClusterVersion {
	cv := &v1alpha1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "ops", Generation: 3}}
	cv.Spec.Member = m
	for _, id := range ids {
		cv.Spec.Clusters = append(cv.Spec.Clusters, v1alpha1.FleetCluster{ID: id, Version: "v1.35.0"})
	}
	return cv
}

var nodesReady = v1alpha1.Gate{NodesReady: &v1alpha1.NodesReadyGate{}}

func platformPlan() *v1alpha1.UpgradePlanSpec {
	return &v1alpha1.UpgradePlanSpec{Version: "2.0.0", Stages: []v1alpha1.Stage{
		{Name: "crds", Steps: []v1alpha1.Step{{Name: "c", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: "{}"}}}}},
		{Name: "apps", Steps: []v1alpha1.Step{{Name: "a", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: "{}"}}}},
			Gates: []v1alpha1.Gate{{PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "x", Selector: "a=b"}}}},
	}}
}

// One run name per generation, a valid name however long the fleet's.
func TestMemberRunNameIsPerGenerationAndValid(t *testing.T) {
	cv := memberFleet(nil)
	a := memberRunName(cv)
	if a != memberRunName(cv.DeepCopy()) {
		t.Errorf("the name is not deterministic")
	}
	cv.Generation++
	if memberRunName(cv) == a {
		t.Errorf("a new generation kept the run name %s", a)
	}
	cv.Name = strings.Repeat("a-very-long.fleet-name", 10)
	if errs := validation.IsDNS1123Subdomain(memberRunName(cv)); len(errs) > 0 || len(memberRunName(cv)) > 63 {
		t.Errorf("%q: %v", memberRunName(cv), errs)
	}
}

// The health checks hold after the plan's last stage; without a plan they
// have a stage of their own, which the engine accepts.
func TestMemberPlanPutsHealthChecksLast(t *testing.T) {
	p := memberPlan(memberFleet(&v1alpha1.FleetMemberSpec{Plan: platformPlan(), HealthChecks: []v1alpha1.Gate{nodesReady}}), "runs", "v1.35.0")
	last := p.Spec.Stages[1]
	if len(last.Gates) != 2 || last.Gates[1].NodesReady == nil || len(p.Spec.Stages[0].Gates) != 0 {
		t.Errorf("gates: %+v", p.Spec.Stages)
	}
	if p.Namespace != "runs" || p.Spec.Version != "2.0.0" {
		t.Errorf("plan %s/%s version %s", p.Namespace, p.Name, p.Spec.Version)
	}

	h := memberPlan(memberFleet(&v1alpha1.FleetMemberSpec{HealthChecks: []v1alpha1.Gate{nodesReady}}), "runs", "v1.35.0")
	if len(h.Spec.Stages) != 1 || len(h.Spec.Stages[0].Gates) != 1 || h.Spec.Version != "v1.35.0" {
		t.Errorf("health checks alone: %+v", h.Spec)
	}
	if errs := plan.ValidateInCluster(h); len(errs) > 0 {
		t.Errorf("the health checks' plan is refused: %v", errs)
	}
}

// What the schema cannot see is refused with the field named.
func TestValidateMemberNamesTheField(t *testing.T) {
	if err := validateMember(memberFleet(nil, "projects/p/clusters/c")); err != nil {
		t.Errorf("no member: %v", err)
	}
	health := &v1alpha1.FleetMemberSpec{HealthChecks: []v1alpha1.Gate{nodesReady}}
	if err := validateMember(memberFleet(health, "eu-1")); err != nil {
		t.Errorf("a valid member: %v", err)
	}
	err := validateMember(memberFleet(health, "eu-1", "projects/p/clusters/c"))
	if err == nil || !strings.Contains(err.Error(), "spec.clusters[1].kubeconfigSecretRef") {
		t.Errorf("an id that makes no Secret name: %v", err)
	}
	cv := memberFleet(health, "projects/p/clusters/c")
	cv.Spec.Clusters[0].KubeconfigSecretRef = &v1alpha1.KubeconfigSecretRef{Name: "c-admin"}
	if err := validateMember(cv); err != nil {
		t.Errorf("an id with its Secret named: %v", err)
	}
	bad := platformPlan()
	bad.Stages[1].Steps[0].Name = "c"
	err = validateMember(memberFleet(&v1alpha1.FleetMemberSpec{Plan: bad}, "eu-1"))
	if err == nil || !strings.Contains(err.Error(), "spec.member.plan.stages[1].steps[0].name") {
		t.Errorf("a duplicate step: %v", err)
	}
}

func TestKubeconfigRefDefaultsToClusterAPIs(t *testing.T) {
	got := kubeconfigRef(v1alpha1.FleetCluster{ID: "eu-1"})
	if got.Name != "eu-1-kubeconfig" || got.Key != "value" {
		t.Errorf("default %+v", got)
	}
	got = kubeconfigRef(v1alpha1.FleetCluster{ID: "eu-1", KubeconfigSecretRef: &v1alpha1.KubeconfigSecretRef{Name: "admin"}})
	if got.Name != "admin" || got.Key != "value" {
		t.Errorf("named without a key %+v", got)
	}
}
