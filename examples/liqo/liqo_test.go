package liqo_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
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

func open(t *testing.T, values map[string]string) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(context.Background(), catalog.Ref{Path: "."}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.SetValues(values); err != nil {
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

// installed are the objects of install/v1.0.0.
func installed(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	b, err := source.Read(context.Background(), v1alpha1.Source{Path: "install/v1.0.0"}, source.Env{BaseDir: "."})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := source.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func find(objs []*unstructured.Unstructured, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}

func containerImages(o *unstructured.Unstructured) map[string]string {
	cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	out := map[string]string{}
	for _, c := range cs {
		m := c.(map[string]any)
		out[m["name"].(string)] = m["image"].(string)
	}
	return out
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
	mirror := open(t, map[string]string{"crdsURL": "http://127.0.0.1:1/liqo/{tag}", "imageRegistry": "registry.local/liqo"})
	p := planFor(t, mirror, "v1.1.0", "v1.0.0")
	if got := p.Spec.Stages[1].Steps[0].CRDs.URL; !strings.HasPrefix(got, "http://127.0.0.1:1/liqo/v1.1.0/") {
		t.Errorf("crdsURL override: first CRD from %s", got)
	}
	if got := p.Spec.Stages[2].Steps[0].Image.Images["controller-manager"]; got != "registry.local/liqo/liqo-controller-manager:v1.1.0" {
		t.Errorf("imageRegistry override: controller-manager image %s", got)
	}
}

// TestCRDFilesAreLiqos: the template's CRD files are the 28 file names
// of the liqo-crds chart at v1.0.0 and v1.1.0 (test/bench/liqo holds
// them, rebuilt from the chart).
func TestCRDFilesAreLiqos(t *testing.T) {
	p := planFor(t, open(t, nil), "v1.1.0", "v1.0.0")
	var got []string
	for _, s := range p.Spec.Stages[1].Steps {
		got = append(got, s.CRDs.URL[strings.LastIndex(s.CRDs.URL, "/")+1:])
	}
	sort.Strings(got)
	for _, tag := range []string{"v1.0.0", "v1.1.0"} {
		entries, err := os.ReadDir(filepath.Join("..", "..", "test", "bench", "liqo", tag, "crds"))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, e := range entries {
			want = append(want, e.Name())
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("the plan's CRD files differ from Liqo %s's:\n got %v\nwant %v", tag, got, want)
		}
	}
}

// TestPlansTargetTheInstall: detection reads v1.0.0 from the install;
// every workload a plan changes or checks exists there with the container
// it names; the gateway templates the plan applies are the installed ones
// with the new tag.
func TestPlansTargetTheInstall(t *testing.T) {
	cat := open(t, nil)
	objs := installed(t)
	im := cat.Spec.Detect[0].Image
	cm := find(objs, im.Kind, im.Namespace, im.Name)
	if cm == nil {
		t.Fatalf("the install has no %s %s/%s: detection reads nothing", im.Kind, im.Namespace, im.Name)
	}
	if tag, _ := catalog.ImageTag(containerImages(cm)[im.Container]); tag != "v1.0.0" {
		t.Errorf("detection reads %q from the install, want v1.0.0", tag)
	}
	p := planFor(t, cat, "v1.1.0", "v1.0.0")
	for _, st := range p.Spec.Stages {
		for _, s := range st.Steps {
			if s.Image != nil {
				o := find(objs, s.Image.Kind, s.Image.Namespace, s.Image.Name)
				if o == nil {
					t.Errorf("step %s: no %s %s/%s in the install", s.Name, s.Image.Kind, s.Image.Namespace, s.Image.Name)
					continue
				}
				have := containerImages(o)
				for c, img := range s.Image.Images {
					old, ok := have[c]
					if !ok {
						t.Errorf("step %s: %s has no container %s", s.Name, s.Image.Name, c)
					}
					if strings.Replace(old, ":v1.0.0", ":v1.1.0", 1) != img {
						t.Errorf("step %s: container %s goes from %s to %s: not the same image at the new tag", s.Name, c, old, img)
					}
				}
			}
			if s.Manifests != nil {
				b, err := source.Read(context.Background(), s.Manifests.Source, source.Env{})
				if err != nil {
					t.Fatal(err)
				}
				news, err := source.Decode(b)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range news {
					o := find(objs, n.GetKind(), n.GetNamespace(), n.GetName())
					if o == nil {
						t.Errorf("step %s applies %s %s/%s, which the install lacks", s.Name, n.GetKind(), n.GetNamespace(), n.GetName())
						continue
					}
					ob, _ := yaml.Marshal(o.Object)
					nb, _ := yaml.Marshal(n.Object)
					if strings.ReplaceAll(string(ob), "v1.0.0", "v1.1.0") != string(nb) {
						t.Errorf("step %s: %s %s is not the installed one at v1.1.0", s.Name, n.GetKind(), n.GetName())
					}
				}
			}
		}
	}
	if find(objs, "Deployment", "liqo-tenant-cluster-2", "gw-cluster-2") == nil {
		t.Errorf("the install has no gateway in a liqo-tenant-* namespace: the recreate step would match nothing")
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
