//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/config/crd"
	"github.com/upshift-dev/upshift/internal/crds"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// saveRounds is how many saves of each object are timed.
const saveRounds = 40

// What one save of a run's record costs the API server, and why: the
// record of a liqo upgrade (as `upshift apply` left it) saved the way
// the run store saves it (a JSON patch of the status subresource that
// first sets the resourceVersion), against the same record under a CRD
// with no schema below spec and status, and a record with an empty spec
// and a one-field status. The final save is on the path of every run's
// end. Medians of 40, the three saved in turn.
func TestRunSaveCost(t *testing.T) {
	root := repoRoot()
	bin := buildUpshift(t, root)
	c, err := testenv.StartTied(localcluster.Options{Name: "bench-save-cost"})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	defer c.Stop()
	env := append(os.Environ(), "KUBECONFIG="+c.KubeconfigPath())
	for _, v := range []string{"v1.0.0", "v1.1.0"} {
		mustRun(t, env, bin, "apply", "-f", filepath.Join(root, "test", "bench", "liqo", v, "plan.yaml"), "-o", "json")
	}
	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = 1000, 1000
	dc := dynamic.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const ns = "upshift-system"
	real := schema.GroupVersionResource{Group: "upshift.dev", Version: "v1alpha1", Resource: "upgraderuns"}
	run, err := dc.Resource(real).Namespace(ns).Get(ctx, "liqo-1.1.0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ax := apiextclient.NewForConfigOrDie(cfg)
	plain := schemalessRuns(t, ax, "bench.upshift.dev", "spec", "status")
	specOnly := schemalessRuns(t, ax, "spec.bench.upshift.dev", "spec")

	type record struct {
		what         string
		gvr          schema.GroupVersionResource
		name         string
		spec, status any
		rv           string
		took         []time.Duration
	}
	spec, status := run.Object["spec"], run.Object["status"]
	records := []*record{
		{what: "the liqo record, as stored", gvr: real, name: "save-cost", spec: spec, status: status},
		{what: "the same under a CRD with no schema below spec and status", gvr: plain, name: "save-cost", spec: spec, status: status},
		{what: "an empty spec, a one-field status, no schema", gvr: plain, name: "save-cost-small", spec: map[string]any{}, status: map[string]any{"message": "m"}},
		{what: "the liqo record, no schema below spec", gvr: specOnly, name: "save-cost", spec: spec, status: status},
	}
	for _, r := range records {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": r.gvr.GroupVersion().String(), "kind": "UpgradeRun",
			"metadata": map[string]any{"name": r.name, "namespace": ns}, "spec": r.spec,
		}}
		got, err := dc.Resource(r.gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", r.what, err)
		}
		if r.rv, err = save(ctx, dc, r.gvr, ns, r.name, got.GetResourceVersion(), "add", "/status", r.status); err != nil {
			t.Fatalf("first save of %s: %v", r.what, err)
		}
	}
	for i := range saveRounds + 1 {
		for _, r := range records {
			start := time.Now()
			rv, err := save(ctx, dc, r.gvr, ns, r.name, r.rv, "replace", "/status/message", fmt.Sprintf("save %d", i))
			if err != nil {
				t.Fatalf("save %s: %v", r.what, err)
			}
			r.rv = rv
			if i > 0 { // the first round warms the caches
				r.took = append(r.took, time.Since(start))
			}
		}
	}
	base := median(records[0].took)
	for _, r := range records {
		m := median(r.took)
		t.Logf("%-58s p50 %8s  p90 %8s  %.2f ×", r.what, m.Round(100*time.Microsecond), percentile(r.took, 0.9).Round(100*time.Microsecond), float64(m)/float64(base))
	}
}

// save patches one field of a run's status as the run store does: a JSON
// patch whose first operation sets the resourceVersion it saves over.
func save(ctx context.Context, dc dynamic.Interface, r schema.GroupVersionResource, ns, name, rv, op, path string, value any) (string, error) {
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/resourceVersion", "value": rv},
		{"op": op, "path": path, "value": value},
	})
	if err != nil {
		return "", err
	}
	u, err := dc.Resource(r).Namespace(ns).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: "upshift"}, "status")
	if err != nil {
		return "", err
	}
	return u.GetResourceVersion(), nil
}

// schemalessRuns installs a copy of the UpgradeRun CRD in another group
// whose fields (those named) keep anything, unchecked, and waits until it
// is served.
func schemalessRuns(t *testing.T, ax apiextclient.Interface, group string, fields ...string) schema.GroupVersionResource {
	t.Helper()
	c, err := crd.Get("upgraderuns.upshift.dev")
	if err != nil {
		t.Fatal(err)
	}
	c.Name, c.Spec.Group = c.Spec.Names.Plural+"."+group, group
	c.Spec.Names.ShortNames, c.Spec.Names.Categories = nil, nil
	keep := true
	for i := range c.Spec.Versions {
		props := c.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties
		for _, f := range fields {
			props[f] = apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &keep}
		}
	}
	ctx := context.Background()
	if _, err := ax.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := ax.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, c.Name, metav1.GetOptions{})
		return err == nil && crds.Established(got), err
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", c.Name, err)
	}
	return schema.GroupVersionResource{Group: group, Version: c.Spec.Versions[0].Name, Resource: c.Spec.Names.Plural}
}
