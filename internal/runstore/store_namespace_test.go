package runstore

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// Saving into a namespace that does not exist says so.
func TestSaveWithoutNamespace(t *testing.T) {
	t.Parallel()
	c := testenv.Cluster(t)
	testenv.InstallCRDs(t, c.RESTConfig())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := mustNew(t, c.RESTConfig(), "runs-never-created")
	start := time.Now()
	err := s.Save(ctx, newRun("demo", "1.0.0", time.Now()))
	if err == nil || !strings.Contains(err.Error(), "runs-never-created") {
		t.Fatalf("Save into a missing namespace = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Save retried a missing namespace for %s", d)
	}
	t.Log(err)
}

// A namespace found once, by EnsureNamespace or by a caller that read it
// (preflight: NamespaceReady), is not asked for again by this store; a
// store that was told nothing asks, and creates it when missing.
func TestEnsureNamespaceAsksOnce(t *testing.T) {
	t.Parallel()
	c := testenv.Cluster(t)
	var gets atomic.Int64
	cfg := rest.CopyConfig(c.RESTConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") {
				gets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	fresh := mustNew(t, cfg, testNamespace(t))
	for range 2 {
		if err := fresh.EnsureNamespace(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("two EnsureNamespace of a missing namespace asked %d times, want once (then created)", n)
	}

	gets.Store(0)
	told := mustNew(t, cfg, "kube-system")
	told.NamespaceReady()
	if err := told.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("EnsureNamespace after NamespaceReady asked %d times, want none", n)
	}
}
