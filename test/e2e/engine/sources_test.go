package engine_test

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// TestSourcesComeFromWhereThePlanSays: a url source over plain http:// is
// refused before anything is fetched or changed, naming the field and
// the fix; --allow-http-sources or the plan's spec.allowInsecureHTTP
// lets it through. An https:// source that redirects to another server
// (another port of 127.0.0.1) is refused, and that server never asked.
func TestSourcesComeFromWhereThePlanSays(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	var asked atomic.Int32
	configMap := func(rw http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		name := strings.Trim(r.URL.Path, "/")
		fmt.Fprintf(rw, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {from: url}\n", name)
	}
	plain := httptest.NewServer(http.HandlerFunc(configMap)) // 127.0.0.1
	t.Cleanup(plain.Close)
	elsewhere := httptest.NewTLSServer(http.HandlerFunc(configMap))
	t.Cleanup(elsewhere.Close)
	redirecting := httptest.NewTLSServer(http.RedirectHandler(elsewhere.URL+"/from-elsewhere", http.StatusFound))
	t.Cleanup(redirecting.Close)

	dir := t.TempDir()
	write(t, filepath.Join(dir, "ca.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: redirecting.Certificate().Raw})))
	plan := func(name, spec, source string) string {
		p := filepath.Join(dir, name+".yaml")
		write(t, p, fmt.Sprintf("apiVersion: upshift.dev/v1alpha1\nkind: UpgradePlan\nmetadata: {name: %s}\nspec:\n  version: 1.0.0\n%s  stages:\n  - name: only\n    steps:\n    - name: cm\n      manifests: {%s}\n", name, spec, source))
		return p
	}
	exists := func(name string) bool {
		_, err := w.cs.CoreV1().ConfigMaps("default").Get(w.ctx, name, metav1.GetOptions{})
		return err == nil
	}

	refused := plan("plain", "", fmt.Sprintf("url: %q", plain.URL+"/from-http"))
	r := w.mustExit(1, nil, "apply", "-f", refused)
	want := "spec.stages[0].steps[0].manifests.url: http:// is refused: use an https:// URL, or set spec.allowInsecureHTTP: true in the plan (or start upshift with --allow-http-sources)"
	if !strings.Contains(r.stderr, want) || asked.Load() != 0 || exists("from-http") {
		t.Fatalf("an http:// source: want it refused unfetched (%q), got %s; the server was asked %d times", want, r, asked.Load())
	}
	w.mustExit(0, nil, "apply", "-f", refused, "--allow-http-sources")
	if !exists("from-http") {
		t.Error("with --allow-http-sources: the source's ConfigMap was not applied")
	}
	w.mustExit(0, nil, "apply", "-f", plan("allowed", "  allowInsecureHTTP: true\n", fmt.Sprintf("url: %q", plain.URL+"/from-allowed")))
	if !exists("from-allowed") {
		t.Error("with spec.allowInsecureHTTP: the source's ConfigMap was not applied")
	}

	asked.Store(0)
	r = w.mustExit(1, nil, "apply", "-f", plan("redirected", "", fmt.Sprintf("url: %q, caFile: ca.pem", redirecting.URL+"/m.yaml")))
	if !strings.Contains(r.stderr, "spec.stages[0].steps[0].manifests") || !strings.Contains(r.stderr, "redirect refused") ||
		!strings.Contains(r.stderr, "redirects to another host") || asked.Load() != 0 || exists("from-elsewhere") {
		t.Errorf("a redirect to another port: want it refused, the server it points to never asked; got %s (asked %d times)", r, asked.Load())
	}
}
