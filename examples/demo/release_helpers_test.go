package demo_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"helm.sh/helm/v3/pkg/action"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/source"
)

var (
	versions = []string{"1.0.0", "1.1.0", "2.0.0"}
	dirFS    = os.DirFS(".")
)

// release is one version's plan and the objects its sources hold, read
// and decoded the way the engine reads them.
type release struct {
	plan    *v1alpha1.UpgradePlan
	objects []*unstructured.Unstructured
}

func load(t *testing.T, version string) release {
	t.Helper()
	l, err := plan.Load(filepath.Join(version, "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := plan.Validate(l); len(errs) > 0 {
		t.Fatalf("%s/plan.yaml: %v", version, errs.ToAggregate())
	}
	r := release{plan: l.Plan}
	for _, st := range l.Plan.Spec.Stages {
		for _, s := range st.Steps {
			var src *v1alpha1.Source
			switch {
			case s.Helm != nil:
				r.objects = append(r.objects, rendered(t, s.Helm, l.BaseDir)...)
				continue
			case s.CRDs != nil:
				src = &s.CRDs.Source
			case s.Manifests != nil:
				src = &s.Manifests.Source
			default:
				continue
			}
			b, err := source.Read(context.Background(), *src, source.Env{BaseDir: l.BaseDir})
			if err != nil {
				t.Fatalf("%s step %s: %v", version, s.Name, err)
			}
			objs, err := source.Decode(b)
			if err != nil {
				t.Fatalf("%s step %s: %v", version, s.Name, err)
			}
			r.objects = append(r.objects, objs...)
		}
	}
	return r
}

// rendered are a helm step's objects, rendered client-side (no cluster)
// with the step's values, in the release's namespace.
func rendered(t *testing.T, h *v1alpha1.HelmStep, base string) []*unstructured.Unstructured {
	t.Helper()
	b, err := helmx.FetchChart(context.Background(), helmx.ChartRef{Chart: h.Chart}, base)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := helmx.LoadArchive(b)
	if err != nil {
		t.Fatal(err)
	}
	var files [][]byte
	for _, f := range h.ValuesFiles {
		vb, err := os.ReadFile(filepath.Join(base, f))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, vb)
	}
	var inline []byte
	if h.Values != nil {
		inline = h.Values.Raw
	}
	values, err := helmx.MergeValues(files, inline)
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(&action.Configuration{})
	in.ClientOnly, in.DryRun, in.Replace = true, true, true
	in.ReleaseName, in.Namespace = h.Release, h.Namespace
	rel, err := in.Run(ch, values)
	if err != nil {
		t.Fatalf("render %s: %v", h.Chart, err)
	}
	objs, err := source.Decode([]byte(rel.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetNamespace() == "" {
			o.SetNamespace(h.Namespace)
		}
	}
	return objs
}

func (r release) images() map[string]string { // "step/container" -> image
	out := map[string]string{}
	for _, st := range r.plan.Spec.Stages {
		for _, s := range st.Steps {
			if s.Image != nil {
				for c, img := range s.Image.Images {
					out[s.Name+"/"+c] = img
				}
			}
		}
	}
	return out
}

func find(objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	return nil
}

func containers(t *testing.T, o *unstructured.Unstructured) []map[string]any {
	t.Helper()
	list, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, c := range list {
		out = append(out, c.(map[string]any))
	}
	return out
}
