package engine_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// largeCRDs writes n CRDs of about size bytes each whose schema
// descriptions are random text, so they compress as badly as real
// generated schemas with long docs do (about 3:4 here).
func largeCRDs(t *testing.T, dir string, n, size int, version string) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		noise := make([]byte, size*3/4)
		if _, err := rand.Read(noise); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widget%ds.big.example.com, labels: {release: %q}}
spec:
  group: big.example.com
  names: {kind: Widget%d, plural: widget%ds}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: %q
        x-kubernetes-preserve-unknown-fields: true
`, i, version, i, i, base64.StdEncoding.EncodeToString(noise))
	}
	write(t, filepath.Join(dir, "crds.yaml"), b.String())
}

// TestPlatformWithFiveMiBOfSources: a platform whose CRDs and charts come
// to 5 MiB (4 MiB compressed, past what one Secret holds) upgrades, is
// killed mid-run and resumes, and rolls back; the run record saved on
// every transition stays small.
func TestPlatformWithFiveMiBOfSources(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()

	// Version 1 of the CRDs, small, installed first.
	v1 := w.t.TempDir()
	largeCRDs(t, v1, 40, 1<<10, "1")
	write(t, filepath.Join(v1, "plan.yaml"), `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: big-1}
spec:
  version: "1"
  stages:
  - name: crds
    steps:
    - {name: crds, crds: {path: crds.yaml, minCount: 40}}
`)
	w.mustExit(0, nil, "apply", "-f", filepath.Join(v1, "plan.yaml"))

	// Version 2: 40 CRDs of 128 KiB and the chart, 5 MiB in all.
	v2 := w.t.TempDir()
	largeCRDs(t, v2, 40, 128<<10, "2")
	writeCacheChart(t, v2, "1.0.0")
	write(t, filepath.Join(v2, "plan.yaml"), `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: big-2}
spec:
  version: "2"
  stages:
  - name: crds
    steps:
    - {name: crds, timeout: 2m, crds: {path: crds.yaml, minCount: 40}}
  - name: addons
    steps:
    - {name: cache, helm: {release: shop-cache, namespace: shop, chart: cache-1.0.0}}
  - name: workloads
    steps:
    - {name: web, image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.0"}}}
`)
	plan := filepath.Join(v2, "plan.yaml")
	killed := w.upshift([]string{runner.KillAfterTransitionEnv + "=6"}, append([]string{"apply", "-f", plan}, fastLease...)...)
	if killed.code != -9 {
		t.Fatalf("kill after transition 6: want SIGKILL, got %s", killed)
	}
	w.mustExit(0, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")
	crd, err := w.dyn.Resource(crdResource).Get(w.ctx, "widget7s.big.example.com", metav1.GetOptions{})
	if err != nil || crd.GetLabels()["release"] != "2" {
		t.Fatalf("CRD after the upgrade: release %q, %v", crd.GetLabels()["release"], err)
	}

	run := w.run("big-2")
	if run.Spec.Sources == nil || run.Spec.Sources.Packed < 2<<20 || len(run.Spec.Sources.Secrets) < 3 {
		t.Fatalf("sources ref %+v: want more than 2 MiB compressed over several chunks", run.Spec.Sources)
	}
	record, err := w.dyn.Resource(v1alpha1.GroupVersion.WithResource(runstore.Resource)).Namespace(runner.DefaultNamespace).Get(w.ctx, "big-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := record.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	recordBytes := len(raw)
	if recordBytes > 32<<10 {
		t.Errorf("the run record is %d bytes; it is written on every transition and must not carry the sources", recordBytes)
	}
	t.Logf("sources: %d bytes, %d compressed, in %d chunks; run record: %d bytes", run.Spec.Sources.Bytes, run.Spec.Sources.Packed, len(run.Spec.Sources.Secrets), recordBytes)

	w.mustExit(0, nil, append([]string{"rollback", "big-2"}, fastLease...)...)
	w.waitImages("app=web", "app", "example.com/shop/web:1.0.0")
	crd, err = w.dyn.Resource(crdResource).Get(w.ctx, "widget7s.big.example.com", metav1.GetOptions{})
	if err != nil || crd.GetLabels()["release"] != "1" {
		t.Fatalf("CRD after the rollback: release %q, %v", crd.GetLabels()["release"], err)
	}
}
