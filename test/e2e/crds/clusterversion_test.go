package crds_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

var clusterVersions = v1alpha1.GroupVersion.WithResource("clusterversions")

// fleetSample is examples/fleet/clusterversion.yaml in the test's
// namespace.
func fleetSample(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "fleet", "clusterversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(ns)
	return u
}

// The example fleet is accepted, and what it leaves out the API server
// fills in with the multicluster operator's defaults (one cluster at a
// time, requiredAvailableCount 1) and Upshift's (halt on a failure).
func TestClusterVersionSampleAndDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.dyn.Resource(clusterVersions).Namespace(e.ns).Create(e.ctx, fleetSample(t, e.ns), strict); err != nil {
		t.Fatalf("examples/fleet/clusterversion.yaml refused: %v", err)
	}

	bare := fleetSample(t, e.ns)
	bare.SetName("bare")
	unstructured.RemoveNestedField(bare.Object, "spec", "requiredAvailableCount")
	unstructured.RemoveNestedField(bare.Object, "spec", "onFailure")
	waves, _, _ := unstructured.NestedSlice(bare.Object, "spec", "waves")
	delete(waves[0].(map[string]any), "maxConcurrency")
	_ = unstructured.SetNestedSlice(bare.Object, waves, "spec", "waves")
	clusters, _, _ := unstructured.NestedSlice(bare.Object, "spec", "clusters")
	clusters[1].(map[string]any)["kubeconfigSecretRef"] = map[string]any{"name": "eu-2-admin"}
	_ = unstructured.SetNestedSlice(bare.Object, clusters, "spec", "clusters")
	made, err := e.dyn.Resource(clusterVersions).Namespace(e.ns).Create(e.ctx, bare, strict)
	if err != nil {
		t.Fatal(err)
	}
	cv := fromUnstructured[v1alpha1.ClusterVersion](t, made)
	if ref := cv.Spec.Clusters[0].KubeconfigSecretRef; ref == nil || ref.Key != "kubeconfig" {
		t.Errorf("clusters[0].kubeconfigSecretRef %+v: want the example's key", ref)
	}
	if cv.Spec.Member == nil || cv.Spec.Member.Plan == nil || len(cv.Spec.Member.HealthChecks) != 2 {
		t.Errorf("spec.member %+v: want the example's plan and two health checks", cv.Spec.Member)
	}
	if ref := cv.Spec.Clusters[1].KubeconfigSecretRef; ref == nil || ref.Key != "value" {
		t.Errorf("clusters[1].kubeconfigSecretRef %+v: want key defaulted to value (Cluster API's)", ref)
	}
	if cv.Spec.RequiredAvailableCount != 1 || cv.Spec.OnFailure != v1alpha1.FailureHalt || cv.Spec.Waves[0].MaxConcurrency != 1 {
		t.Errorf("defaults: requiredAvailableCount %d, onFailure %q, waves[0].maxConcurrency %d; want 1, Halt, 1",
			cv.Spec.RequiredAvailableCount, cv.Spec.OnFailure, cv.Spec.Waves[0].MaxConcurrency)
	}
}

// Each mistake a fleet can make that needs no plugin to see is refused by
// the API server, with the field and the fix.
func TestInvalidClusterVersionsAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name string
		edit func(spec map[string]any)
		want []string
	}{
		{"duplicate id", func(s map[string]any) {
			cs := s["clusters"].([]any)
			cs[1].(map[string]any)["id"] = "eu-1"
		}, []string{"spec.clusters[1]", "Duplicate value"}},
		{"no cluster could go out", func(s map[string]any) { s["requiredAvailableCount"] = int64(4) },
			[]string{"requiredAvailableCount must be below the number of clusters"}},
		{"zero required", func(s map[string]any) { s["requiredAvailableCount"] = int64(0) },
			[]string{"spec.requiredAvailableCount", "greater than or equal to 1"}},
		{"insecure with TLS", func(s map[string]any) { s["opsEndpoint"].(map[string]any)["insecure"] = true },
			[]string{"spec.opsEndpoint", "insecure sends in plain text: remove tlsSecretRef"}},
		{"no endpoint", func(s map[string]any) { delete(s["opsEndpoint"].(map[string]any), "endpoint") },
			[]string{"spec.opsEndpoint.endpoint", "Required value"}},
		{"a wave with no clusters", func(s map[string]any) {
			w := s["waves"].([]any)[1].(map[string]any)
			delete(w, "clusters")
		}, []string{"spec.waves[1]", "set clusters or selector"}},
		{"unknown failure policy", func(s map[string]any) { s["onFailure"] = "Rollback" },
			[]string{"spec.onFailure", `"Halt", "Revert"`}},
		{"empty version", func(s map[string]any) { s["clusters"].([]any)[0].(map[string]any)["version"] = "" },
			[]string{"spec.clusters[0].version"}},
		{"an empty member", func(s map[string]any) { s["member"] = map[string]any{} },
			[]string{"spec.member", "set plan, healthChecks or both"}},
		{"a member plan with its own ServiceAccount", func(s map[string]any) {
			s["member"].(map[string]any)["plan"].(map[string]any)["serviceAccountName"] = "admin"
		}, []string{"spec.member", "acts with its cluster's kubeconfig: remove plan.serviceAccountName"}},
		{"a member plan with a step named twice", func(s map[string]any) {
			st := s["member"].(map[string]any)["plan"].(map[string]any)["stages"].([]any)
			st = append(st, map[string]any{"name": "again", "steps": []any{map[string]any{"name": "platform-config", "pause": map[string]any{"duration": "1s"}}}})
			s["member"].(map[string]any)["plan"].(map[string]any)["stages"] = st
		}, []string{"spec.member.plan", "give each step its own name"}},
		{"a health check of two kinds", func(s map[string]any) {
			s["member"].(map[string]any)["healthChecks"].([]any)[0].(map[string]any)["pvcsBound"] = map[string]any{"namespace": "x"}
		}, []string{"spec.member.healthChecks[0]", "set exactly one gate kind"}},
		{"a kubeconfig Secret that is no name", func(s map[string]any) {
			s["clusters"].([]any)[0].(map[string]any)["kubeconfigSecretRef"] = map[string]any{"name": "Eu_1"}
		}, []string{"spec.clusters[0].kubeconfigSecretRef.name"}},
	}
	for _, c := range cases {
		u := fleetSample(t, e.ns)
		u.SetName("bad-" + strings.ReplaceAll(c.name, " ", "-"))
		c.edit(u.Object["spec"].(map[string]any))
		_, err := e.dyn.Resource(clusterVersions).Namespace(e.ns).Create(e.ctx, u, metav1.CreateOptions{})
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: refused with %q, want it to say %q", c.name, err, w)
			}
		}
	}
}
