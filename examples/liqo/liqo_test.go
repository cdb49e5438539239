package liqo_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/source"
	upversions "github.com/upshift-dev/upshift/internal/versions"
)

var releases = []string{"v1.0.0", "v1.0.1", "v1.1.0"}

// manifestsURL stands for the user's rendition of the chart: the catalog
// has no default.
const manifestsURL = "https://mirror.example/liqo/{tag}/liqo.yaml"

func open(t *testing.T, values map[string]string) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(context.Background(), catalog.Ref{Path: "."}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]string{"manifestsURL": manifestsURL}
	for k, v := range values {
		set[k] = v
	}
	if err := cat.SetValues(set); err != nil {
		t.Fatal(err)
	}
	return cat
}

func planFor(t *testing.T, cat *catalog.Catalog, v, from string) *v1alpha1.UpgradePlan {
	t.Helper()
	var fv *semver.Version
	if from != "" {
		fv = semver.MustParse(from)
	}
	l, err := cat.PlanFor(context.Background(), semver.MustParse(v), fv)
	if err != nil {
		t.Fatalf("release %s: %v", v, err)
	}
	return l.Plan
}

// TestPathSkipsThePatch: v1.0.0 goes to v1.1.0 in one hop (v1.0.1, a
// patch, is skipped), and to v1.0.1 in one; the README says so.
func TestPathSkipsThePatch(t *testing.T) {
	cat := open(t, nil)
	for _, tc := range []struct{ from, to, want string }{
		{"v1.0.0", "v1.1.0", "1.1.0"},
		{"v1.0.0", "v1.0.1", "1.0.1"},
		{"v1.0.1", "v1.1.0", "1.1.0"},
	} {
		path, err := cat.Path(upversions.Request{Current: semver.MustParse(tc.from), Target: semver.MustParse(tc.to)})
		if err != nil {
			t.Fatalf("%s -> %s: %v", tc.from, tc.to, err)
		}
		var got []string
		for _, r := range path {
			got = append(got, r.Version.String())
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s -> %s: path %v, want %s", tc.from, tc.to, got, tc.want)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "v1.0.0 → v1.1.0") {
		t.Errorf("README.md does not give the path v1.0.0 → v1.1.0")
	}
}

// TestEveryReleasePlanValidates: each release's plan renders, validates
// (as a directory catalog's and as a ConfigMap catalog's, which may read
// no file) and fetches its CRDs from crdsURL with the release's tag, one
// step per CRD of the liqo-crds chart.
func TestEveryReleasePlanValidates(t *testing.T) {
	cat := open(t, nil)
	for _, v := range releases {
		p := planFor(t, cat, v, "v1.0.0")
		if p.Name != "liqo-"+strings.TrimPrefix(v, "v") {
			t.Errorf("release %s runs plan %s", v, p.Name)
		}
		var urls []string
		for _, st := range p.Spec.Stages {
			for _, s := range st.Steps {
				if s.CRDs != nil {
					urls = append(urls, s.CRDs.URL)
				}
				if s.CRDs != nil && s.CRDs.Path != "" || s.Manifests != nil && s.Manifests.Path != "" {
					t.Errorf("release %s step %s reads a file: a ConfigMap catalog cannot", v, s.Name)
				}
			}
		}
		prefix := "https://raw.githubusercontent.com/liqotech/liqo/" + v + "/deployments/liqo/charts/liqo-crds/crds/"
		for _, u := range urls {
			if !strings.HasPrefix(u, prefix) {
				t.Errorf("release %s fetches %s, not under %s", v, u, prefix)
			}
		}
		if len(urls) != 28 {
			t.Errorf("release %s applies %d CRDs, Liqo has 28", v, len(urls))
		}
	}
	mirror := open(t, map[string]string{"crdsURL": "http://127.0.0.1:1/liqo/{tag}"})
	p := planFor(t, mirror, "v1.1.0", "v1.0.0")
	if got := p.Spec.Stages[1].Steps[0].CRDs.URL; !strings.HasPrefix(got, "http://127.0.0.1:1/liqo/v1.1.0/") {
		t.Errorf("crdsURL override: first CRD from %s", got)
	}
	if got := p.Spec.Stages[2].Steps[0].Manifests.URL; got != "https://mirror.example/liqo/v1.1.0/liqo.yaml" {
		t.Errorf("manifestsURL: the chart's objects from %s", got)
	}
}

// TestManifestsURLIsRequired: without the rendition's URL no plan is
// made, and the error names the value to set.
func TestManifestsURLIsRequired(t *testing.T) {
	cat := open(t, map[string]string{"manifestsURL": ""})
	_, err := cat.PlanFor(context.Background(), semver.MustParse("v1.1.0"), semver.MustParse("v1.0.0"))
	if err == nil || !strings.Contains(err.Error(), "manifestsURL") {
		t.Errorf("a plan without manifestsURL: %v; want an error naming manifestsURL", err)
	}
}

// TestCompatibilityMatrixAllowsThePath: the matrix ConfigMap parses and
// lets v1.0.0 reach every later release.
func TestCompatibilityMatrixAllowsThePath(t *testing.T) {
	b, err := os.ReadFile("compatibility-configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := source.Decode(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("compatibility-configmap.yaml: %v (%d objects)", err, len(objs))
	}
	cat := open(t, nil)
	ref := cat.Spec.Compatibility.ConfigMap
	if objs[0].GetName() != ref.Name || objs[0].GetNamespace() != ref.Namespace {
		t.Fatalf("the catalog reads %s/%s, the file is %s/%s", ref.Namespace, ref.Name, objs[0].GetNamespace(), objs[0].GetName())
	}
	raw, _, _ := unstructured.NestedString(objs[0].Object, "data", ref.Key)
	var m catalog.Matrix
	if err := yaml.UnmarshalStrict([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	path, err := cat.Path(upversions.Request{Current: semver.MustParse("v1.0.0"), Target: semver.MustParse("v1.1.0")})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckPath(semver.MustParse("v1.0.0"), path, nil); err != nil {
		t.Error(err)
	}
}
