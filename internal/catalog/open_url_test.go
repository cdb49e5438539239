package catalog

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// TestAURLCatalogReadsItsPlansRelativeToItself: a catalog served over
// https (a CA of its own, trusted with CAFile), its plan named relative to
// it, and refused when the plan names a local file, as an UpgradePlan
// resource would be.
func TestAURLCatalogReadsItsPlansRelativeToItself(t *testing.T) {
	files := map[string]string{
		"/platform/catalog.yaml": `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: remote}
spec:
  releases:
  - {version: 1.0.0, plan: plans/1.0.0.yaml}
  - {version: 1.1.0, plan: plans/1.1.0.yaml}
`,
		"/platform/plans/1.0.0.yaml": `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: remote-1.0.0}
spec:
  version: "1.0.0"
  stages:
  - name: s
    steps:
    - {name: m, manifests: {url: "https://example.invalid/m.yaml"}}
`,
		"/platform/plans/1.1.0.yaml": `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: remote-1.1.0}
spec:
  version: "1.1.0"
  stages:
  - name: s
    steps:
    - {name: m, manifests: {path: m.yaml}}
`,
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ref, err := ParseRef(srv.URL+"/platform/catalog.yaml", "default")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, ref, Options{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Open without the CA = %v, want a certificate error", err)
	}
	c, err := Open(ctx, ref, Options{CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.PlanFor(ctx, semver.MustParse("1.0.0"), nil)
	if err != nil || l.Plan.Name != "remote-1.0.0" || l.BaseDir != "" {
		t.Fatalf("PlanFor(1.0.0) = %+v, %v; want remote-1.0.0 with no directory", l, err)
	}
	_, err = c.PlanFor(ctx, semver.MustParse("1.1.0"), semver.MustParse("1.0.0"))
	if err == nil || !strings.Contains(err.Error(), "spec.stages[0].steps[0].manifests.path") || !strings.Contains(err.Error(), "cannot read files") {
		t.Fatalf("PlanFor(1.1.0) = %v, want its path source refused", err)
	}
}
