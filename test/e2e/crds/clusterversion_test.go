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
	made, err := e.dyn.Resource(clusterVersions).Namespace(e.ns).Create(e.ctx, bare, strict)
	if err != nil {
		t.Fatal(err)
	}
	cv := fromUnstructured[v1alpha1.ClusterVersion](t, made)
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
