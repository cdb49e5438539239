package profiles_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/source"
)

// liqoData holds Liqo's released artifacts (../shared/data/README.md):
// per tag, the chart's crds/ by their real names and liqo-local.yaml, the
// chart's rendition less what the local cluster cannot run.
var liqoData = filepath.Join(repo, "..", "shared", "data", "liqo")

// liqoRendition is Liqo's rendition at tag with metadata.namespace set to
// liqo on its namespaced objects: helm template leaves it out, helm
// install sets it; so does whoever serves the profile's manifestsURL.
func (e *env) liqoRendition(tag string) []*unstructured.Unstructured {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(liqoData, tag, "liqo-local.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	objs, err := source.Decode(b)
	if err != nil {
		e.t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(e.cs.Discovery()))
	for _, o := range objs {
		m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
		if err != nil {
			e.t.Fatalf("%s %s: %v (are Liqo's CRDs installed?)", o.GetKind(), o.GetName(), err)
		}
		if m.Scope.Name() == "namespace" {
			o.SetNamespace("liqo")
		}
	}
	return objs
}

func (e *env) gvr(o *unstructured.Unstructured) schema.GroupVersionResource {
	e.t.Helper()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(e.cs.Discovery()))
	m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
	if err != nil {
		e.t.Fatal(err)
	}
	return m.Resource
}

// liqoDiffs compares each object of Liqo's v1.1.0 rendition with the
// cluster's. What the real object would be on this API server is its
// dry-run create under another name: the API server's defaults and
// allocations included. Then both lose only what the API server or a
// controller owns (normalize). It returns one line per differing field.
func (e *env) liqoDiffs(want []*unstructured.Unstructured) []string {
	e.t.Helper()
	var out []string
	for _, w := range want {
		r := e.dyn.Resource(e.gvr(w)).Namespace(w.GetNamespace())
		live, err := r.Get(e.ctx, w.GetName(), metav1.GetOptions{})
		if err != nil {
			out = append(out, fmt.Sprintf("%s %s: %v", w.GetKind(), w.GetName(), err))
			continue
		}
		probe := w.DeepCopy()
		probe.SetName(w.GetName() + "-cmp")
		real, err := r.Create(e.ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			e.t.Fatalf("dry-run create of Liqo v1.1.0's %s %s: %v", w.GetKind(), w.GetName(), err)
		}
		for _, d := range diff("", normalize(real.Object), normalize(live.Object)) {
			out = append(out, fmt.Sprintf("%s %s/%s: %s", w.GetKind(), w.GetNamespace(), w.GetName(), d))
		}
	}
	return out
}

// crdDiffs compares each of Liqo v1.1.0's CRD files with the cluster's:
// a CRD's name is fixed, so the real one is server-side applied in dry
// run over the live one; any field it would change is a difference.
func (e *env) crdDiffs() []string {
	e.t.Helper()
	dir := filepath.Join(liqoData, "v1.1.0", "crds")
	entries, err := os.ReadDir(dir)
	if err != nil {
		e.t.Fatal(err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	var out []string
	for _, f := range entries {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			e.t.Fatal(err)
		}
		objs, err := source.Decode(b)
		if err != nil || len(objs) != 1 {
			e.t.Fatalf("%s: %v (%d objects)", f.Name(), err, len(objs))
		}
		live, err := e.dyn.Resource(crds).Get(e.ctx, objs[0].GetName(), metav1.GetOptions{})
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", f.Name(), err))
			continue
		}
		body, _ := objs[0].MarshalJSON()
		force := true
		applied, err := e.dyn.Resource(crds).Patch(e.ctx, objs[0].GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "liqo-compare", Force: &force})
		if err != nil {
			e.t.Fatalf("dry-run apply of %s: %v", f.Name(), err)
		}
		for _, d := range diff("", normalize(applied.Object), normalize(live.Object)) {
			out = append(out, fmt.Sprintf("CRD %s: %s", objs[0].GetName(), d))
		}
	}
	return out
}

// normalize drops what the API server or a controller owns: identity and
// bookkeeping metadata, status, the revision annotations the workload
// controllers write, and a Service's allocated cluster IPs.
func normalize(o map[string]any) map[string]any {
	u := &unstructured.Unstructured{Object: o}
	for _, f := range []string{"name", "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(u.Object, "status")
	ann := u.GetAnnotations()
	for _, k := range []string{"deployment.kubernetes.io/revision", "deprecated.daemonset.template.generation", "kubectl.kubernetes.io/last-applied-configuration"} {
		delete(ann, k)
	}
	if len(ann) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
	} else {
		u.SetAnnotations(ann)
	}
	if u.GetKind() == "Service" {
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	}
	return u.Object
}

// diff lists the paths where want and got differ, with both values.
func diff(path string, want, got any) []string {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range gm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		var out []string
		for _, k := range sorted {
			out = append(out, diff(strings.TrimPrefix(path+"."+k, "."), wm[k], gm[k])...)
		}
		return out
	}
	ws, wok := want.([]any)
	gs, gok := got.([]any)
	if wok && gok && len(ws) == len(gs) {
		var out []string
		for i := range ws {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), ws[i], gs[i])...)
		}
		return out
	}
	if reflect.DeepEqual(want, got) {
		return nil
	}
	return []string{fmt.Sprintf("%s: Liqo v1.1.0 has %s, the cluster %s", path, oneLine(want), oneLine(got))}
}

func oneLine(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := yaml.Marshal(v)
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ⏎ ")
}

// stream is objs as a YAML stream (JSON documents).
func stream(objs []*unstructured.Unstructured) []byte {
	var b bytes.Buffer
	for _, o := range objs {
		j, _ := o.MarshalJSON()
		b.WriteString("---\n")
		b.Write(j)
		b.WriteString("\n")
	}
	return b.Bytes()
}
