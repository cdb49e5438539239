package demo_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"helm.sh/helm/v3/pkg/action"

	"github.com/Masterminds/semver/v3"
	"github.com/upshift-dev/upshift/api/v1alpha1"
	demo "github.com/upshift-dev/upshift/examples/demo"
	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/source"
	upversions "github.com/upshift-dev/upshift/internal/versions"
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

// Each plan is valid, named for its version, and reaches it.
func TestPlansAreValid(t *testing.T) {
	for _, v := range versions {
		r := load(t, v)
		if r.plan.Name != "demo-"+v || r.plan.Spec.Version != v {
			t.Errorf("%s: name %q, version %q; want demo-%s, %s", v, r.plan.Name, r.plan.Spec.Version, v, v)
		}
	}
}

// 2.0.0 fails at its proxy step and nowhere else; 1.1.0 has nothing broken.
func TestOnlyTheProxyOf200IsBroken(t *testing.T) {
	for _, v := range versions[1:] {
		for step, img := range load(t, v).images() {
			broken := strings.Contains(img[strings.LastIndex(img, ":")+1:], "broken")
			want := v == "2.0.0" && step == "proxy/proxy"
			if broken != want {
				t.Errorf("%s: %s runs %s: broken %t, want %t", v, step, img, broken, want)
			}
			if tag := img[strings.LastIndex(img, ":")+1:]; !strings.HasPrefix(tag, v) {
				t.Errorf("%s: %s runs %s, want a %s tag", v, step, img, v)
			}
		}
	}
}

// Every upgrade step and gate targets what 1.0.0 installs: the workload
// exists and has each container the step names; each gate's object
// exists or its selector matches at least one object.
func TestUpgradesTargetTheInstalledPlatform(t *testing.T) {
	installed := load(t, "1.0.0").objects
	for _, v := range versions {
		for _, st := range load(t, v).plan.Spec.Stages {
			for _, s := range st.Steps {
				if s.Image == nil {
					continue
				}
				w := find(installed, s.Image.Kind, s.Image.Namespace, s.Image.Name)
				if w == nil {
					t.Errorf("%s step %s: 1.0.0 has no %s %s/%s", v, s.Name, s.Image.Kind, s.Image.Namespace, s.Image.Name)
					continue
				}
				names := map[string]bool{}
				for _, c := range containers(t, w) {
					names[c["name"].(string)] = true
				}
				for c := range s.Image.Images {
					if !names[c] {
						t.Errorf("%s step %s: %s %s/%s has no container %q", v, s.Name, s.Image.Kind, s.Image.Namespace, s.Image.Name, c)
					}
				}
			}
			for i, g := range st.Gates {
				if k := g.EnvKept; k != nil {
					envKeptHolds(t, v, installed, k)
				}
				if g.Ready == nil {
					continue
				}
				if n := matches(t, installed, g.Ready); n == 0 {
					t.Errorf("%s stage %s gate %d: matches nothing 1.0.0 installs", v, st.Name, i)
				}
			}
		}
	}
}

// envKeptHolds: the gate's workload and container exist in 1.0.0, and
// 1.0.0 sets every variable it names (a misspelt name would pass as
// "unset before and after").
func envKeptHolds(t *testing.T, v string, installed []*unstructured.Unstructured, k *v1alpha1.EnvKeptGate) {
	t.Helper()
	w := find(installed, k.Kind, k.Namespace, k.Name)
	if w == nil {
		t.Errorf("%s envKept gate: 1.0.0 has no %s %s/%s", v, k.Kind, k.Namespace, k.Name)
		return
	}
	for _, c := range containers(t, w) {
		if c["name"] != k.Container {
			continue
		}
		set := map[string]bool{}
		env, _ := c["env"].([]any)
		for _, e := range env {
			set[e.(map[string]any)["name"].(string)] = true
		}
		for _, n := range k.Names {
			if !set[n] {
				t.Errorf("%s envKept gate: container %s of %s %s/%s does not set %s", v, k.Container, k.Kind, k.Namespace, k.Name, n)
			}
		}
		return
	}
	t.Errorf("%s envKept gate: %s %s/%s has no container %q", v, k.Kind, k.Namespace, k.Name, k.Container)
}

func matches(t *testing.T, objs []*unstructured.Unstructured, g *v1alpha1.ReadyGate) int {
	t.Helper()
	if g.Name != "" {
		if find(objs, g.Kind, g.Namespace, g.Name) != nil {
			return 1
		}
		return 0
	}
	sel, err := labels.Parse(g.Selector)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		if o.GetAPIVersion() == g.APIVersion && o.GetKind() == g.Kind && o.GetNamespace() == g.Namespace && sel.Matches(labels.Set(o.GetLabels())) {
			n++
		}
	}
	return n
}

// What the platform must look like for the demo to mean something.
func TestInstalledPlatformShape(t *testing.T) {
	installed := load(t, "1.0.0").objects
	for _, o := range installed {
		l := o.GetLabels()
		for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/component"} {
			if l[k] == "" {
				t.Errorf("%s %s/%s: no label %s", o.GetKind(), o.GetNamespace(), o.GetName(), k)
			}
		}
		if l["app.kubernetes.io/part-of"] != "demo" || l["app.kubernetes.io/version"] != "1.0.0" {
			t.Errorf("%s %s/%s: labels %v, want part-of demo, version 1.0.0", o.GetKind(), o.GetNamespace(), o.GetName(), l)
		}
	}
	cm := find(installed, "Deployment", "demo-system", "demo-controller-manager")
	if cm == nil {
		t.Fatal("no controller-manager Deployment")
	}
	if r, _, _ := unstructured.NestedInt64(cm.Object, "spec", "replicas"); r != 2 {
		t.Errorf("controller-manager replicas = %d, want 2", r)
	}
	fieldRef := false
	for _, c := range containers(t, cm) {
		env, _ := c["env"].([]any)
		for _, e := range env {
			if _, ok, _ := unstructured.NestedMap(e.(map[string]any), "valueFrom", "fieldRef"); ok {
				fieldRef = true
			}
		}
	}
	if !fieldRef {
		t.Error("the controller-manager has no env var from a fieldRef: the upgrade must show it survives")
	}
	for _, want := range [][3]string{
		{"DaemonSet", "demo-system", "demo-fabric"}, {"Deployment", "demo-system", "demo-ipam"},
		{"Deployment", "demo-system", "demo-proxy"}, {"Deployment", "demo-tenant-a", "demo-gateway"},
		{"Deployment", "demo-tenant-b", "demo-gateway"},
	} {
		if find(installed, want[0], want[1], want[2]) == nil {
			t.Errorf("1.0.0 installs no %s %s/%s", want[0], want[1], want[2])
		}
	}
	templates := 0
	for _, o := range installed {
		if o.GetKind() == "GatewayTemplate" {
			templates++
		}
	}
	if templates != 2 {
		t.Errorf("%d GatewayTemplates, want 2", templates)
	}
}

// Every version ships the same 3 CRDs, labelled with its version, and
// keeps v1beta1 as the storage version: a CRD that stored objects in a
// newer version could not be rolled back to one without it.
func TestCRDsStayRollbackSafe(t *testing.T) {
	for _, v := range versions {
		crds := 0
		for _, o := range load(t, v).objects {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			crds++
			if got := o.GetLabels()["app.kubernetes.io/version"]; got != v {
				t.Errorf("%s: CRD %s labelled version %q", v, o.GetName(), got)
			}
			vers, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
			var storage []string
			for _, x := range vers {
				if x.(map[string]any)["storage"] == true {
					storage = append(storage, x.(map[string]any)["name"].(string))
				}
			}
			if len(storage) != 1 || storage[0] != "v1beta1" {
				t.Errorf("%s: CRD %s stores %v, want [v1beta1]", v, o.GetName(), storage)
			}
		}
		if crds != 3 {
			t.Errorf("%s: %d CRDs, want 3", v, crds)
		}
	}
}

// The binary carries every version (upshift demo writes FS to disk and
// applies from there), identical to the files here.
func TestFSEmbedsEveryVersion(t *testing.T) {
	err := fs.WalkDir(demo.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		embedded, _ := fs.ReadFile(demo.FS, p)
		onDisk, err := fs.ReadFile(dirFS, p)
		if err != nil || string(embedded) != string(onDisk) {
			t.Errorf("%s: embedded copy differs from the file (%v)", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		if _, err := fs.Stat(demo.FS, v+"/plan.yaml"); err != nil {
			t.Errorf("FS: %v", err)
		}
	}
}

// TestCatalogGoesThroughEveryRelease: the catalog opens, reads the version
// where 1.0.0 installs it, and goes from 1.0.0 to 2.0.0 through 1.1.0 with
// each release's own plan.
func TestCatalogGoesThroughEveryRelease(t *testing.T) {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Ref{Path: "."}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path, err := cat.Path(semverRequest("1.0.0", "2.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(path) != 2 || path[0].Version.String() != "1.1.0" || path[1].Version.String() != "2.0.0" {
		t.Fatalf("path = %v, want 1.1.0 then 2.0.0", path)
	}
	for _, v := range versions {
		l, err := cat.PlanFor(ctx, semver.MustParse(v), nil)
		if err != nil {
			t.Fatalf("release %s: %v", v, err)
		}
		if l.Plan.Name != "demo-"+v {
			t.Errorf("release %s runs plan %s", v, l.Plan.Name)
		}
	}
	im := cat.Spec.Detect[0].Image
	found := false
	for _, o := range load(t, "1.0.0").objects {
		if o.GetKind() == im.Kind && o.GetNamespace() == im.Namespace && o.GetName() == im.Name {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				c := c.(map[string]any)
				if c["name"] == im.Container {
					tag, _ := catalog.ImageTag(c["image"].(string))
					found = tag == "1.0.0"
				}
			}
		}
	}
	if !found {
		t.Errorf("1.0.0 installs no %s %s/%s container %s tagged 1.0.0: spec.detect reads nothing", im.Kind, im.Namespace, im.Name, im.Container)
	}
}

func semverRequest(from, to string) upversions.Request {
	return upversions.Request{Current: semver.MustParse(from), Target: semver.MustParse(to)}
}

// The app plan `upshift demo --ui` serves is valid as it is embedded.
func TestAppPlanIsValid(t *testing.T) {
	l, err := plan.Load(filepath.Join("app", "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := plan.Validate(l); len(errs) > 0 {
		t.Fatalf("app/plan.yaml: %v", errs.ToAggregate())
	}
	if _, err := fs.Stat(demo.FS, "app/plan.yaml"); err != nil {
		t.Errorf("the app plan is not embedded: %v", err)
	}
}
