package liqo_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/source"
)

// liqoData holds Liqo's released artifacts (see ../shared/data/README.md):
// per tag, the chart's crds/ and its rendition. A fresh clone lacks it.
var liqoData = filepath.Join("..", "..", "..", "shared", "data", "liqo")

func needLiqoData(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(liqoData); err != nil {
		t.Skipf("Liqo's released artifacts are absent (%v): this test holds the profile against them", err)
	}
}

// rendition is Liqo's chart at tag as helm template renders it, less
// what the local cluster cannot run (liqo-local.yaml).
func rendition(t *testing.T, tag string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(liqoData, tag, "liqo-local.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := source.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// TestCRDFilesAreLiqos: the plan applies exactly the files of Liqo's
// liqo-crds chart at v1.0.0 and v1.1.0, by their released names.
func TestCRDFilesAreLiqos(t *testing.T) {
	needLiqoData(t)
	p := planFor(t, open(t, nil), "v1.1.0", "v1.0.0")
	var got []string
	for _, s := range p.Spec.Stages[1].Steps {
		got = append(got, s.CRDs.URL[strings.LastIndex(s.CRDs.URL, "/")+1:])
	}
	sort.Strings(got)
	for _, tag := range []string{"v1.0.0", "v1.1.0"} {
		entries, err := os.ReadDir(filepath.Join(liqoData, tag, "crds"))
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

// TestPlanTargetsLiqosObjects: detection reads v1.0.0 from Liqo's v1.0.0
// rendition; every workload a check or gate names is in Liqo's v1.1.0
// rendition, with the container and env the gate reads; the resources
// the freeze denies are Liqo's; the gateways' selector matches the pods
// Liqo's gateway templates make.
func TestPlanTargetsLiqosObjects(t *testing.T) {
	needLiqoData(t)
	cat := open(t, nil)
	im := cat.Spec.Detect[0].Image
	cm := find(rendition(t, "v1.0.0"), im.Kind, im.Name)
	if cm == nil {
		t.Fatalf("Liqo v1.0.0 has no %s %s: detection reads nothing", im.Kind, im.Name)
	}
	if tag, _ := catalog.ImageTag(container(t, cm, im.Container)["image"].(string)); tag != "v1.0.0" {
		t.Errorf("detection reads %q from Liqo v1.0.0, want v1.0.0", tag)
	}
	objs := rendition(t, "v1.1.0")
	p := planFor(t, cat, "v1.1.0", "v1.0.0")
	for _, st := range p.Spec.Stages {
		for _, g := range st.Gates {
			if r := g.Ready; r != nil && r.Name != "" && r.Kind != "CustomResourceDefinition" && find(objs, r.Kind, r.Name) == nil {
				t.Errorf("stage %s waits for %s %s, which Liqo v1.1.0 lacks", st.Name, r.Kind, r.Name)
			}
			if k := g.EnvKept; k != nil {
				o := find(objs, k.Kind, k.Name)
				if o == nil {
					t.Fatalf("stage %s keeps the env of %s %s, which Liqo v1.1.0 lacks", st.Name, k.Kind, k.Name)
				}
				have := map[string]bool{}
				env, _ := container(t, o, k.Container)["env"].([]any)
				for _, e := range env {
					have[e.(map[string]any)["name"].(string)] = true
				}
				for _, n := range k.Names {
					if !have[n] {
						t.Errorf("stage %s keeps env %s, which Liqo v1.1.0's %s does not set", st.Name, n, k.Container)
					}
				}
			}
		}
	}
	checkFreezeAndGateways(t, p.Spec.Stages[0].Steps[0].Freeze.Rules, objs)
}

func container(t *testing.T, o *unstructured.Unstructured, name string) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		if m := c.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("%s %s has no container %s", o.GetKind(), o.GetName(), name)
	return nil
}

// checkFreezeAndGateways: each frozen resource is a CRD of Liqo v1.1.0;
// the recreate step's selector matches the pods of Liqo's gateway
// templates.
func checkFreezeAndGateways(t *testing.T, rules []v1alpha1.FreezeRule, objs []*unstructured.Unstructured) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(liqoData, "v1.1.0", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	crds := map[string]bool{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(liqoData, "v1.1.0", "crds", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		docs, err := source.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			crds[d.GetName()] = true // plural.group
		}
	}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if !crds[res+"."+g] {
					t.Errorf("the freeze denies %s.%s, not a resource of Liqo v1.1.0", res, g)
				}
			}
		}
	}
	sel := labels.Everything()
	for _, st := range planFor(t, open(t, nil), "v1.1.0", "v1.0.0").Spec.Stages {
		for _, s := range st.Steps {
			if s.Recreate != nil {
				if sel, err = labels.Parse(s.Recreate.Selector); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, kind := range []string{"WgGatewayServerTemplate", "WgGatewayClientTemplate"} {
		var tmpl *unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == kind {
				tmpl = o
			}
		}
		if tmpl == nil {
			t.Fatalf("Liqo v1.1.0 has no %s", kind)
		}
		pod, _, _ := unstructured.NestedStringMap(tmpl.Object, "spec", "template", "spec", "deployment", "spec", "template", "metadata", "labels")
		if !sel.Matches(labels.Set(pod)) {
			t.Errorf("the gateways' selector %s misses the pods of Liqo's %s (labels %v)", sel, kind, pod)
		}
	}
}
