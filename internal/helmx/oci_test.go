package helmx

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	dregistry "github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory" // the test registry keeps blobs in memory

	"helm.sh/helm/v3/pkg/registry"
)

// TestFetchFromOCIRegistry pushes the test chart to a registry on
// 127.0.0.1 (spoken to over plain HTTP, as loopback registries are) and
// fetches it by oci:// reference and tag.
func TestFetchFromOCIRegistry(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := &configuration.Configuration{}
	cfg.HTTP.Addr = addr
	cfg.Storage = configuration.Storage{"inmemory": configuration.Parameters{}}
	cfg.Log.Level = "error"
	reg, err := dregistry.NewRegistry(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = reg.ListenAndServe() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = reg.Shutdown(ctx)
	})

	t.Setenv("HELM_REGISTRY_CONFIG", filepath.Join(t.TempDir(), "config.json"))
	archive := packaged(t, t.TempDir())
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadArchive(b)
	if err != nil {
		t.Fatal(err)
	}
	pusher, err := registry.NewClient(registry.ClientOptPlainHTTP())
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/charts/%s:%s", addr, want.Name(), want.Metadata.Version)
	var pushErr error
	for range 50 { // the registry starts listening in the background
		if _, pushErr = pusher.Push(b, ref); pushErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if pushErr != nil {
		t.Fatalf("push %s: %v", ref, pushErr)
	}

	got := mustFetch(t, ChartRef{Chart: fmt.Sprintf("oci://%s/charts/%s", addr, want.Name()), Version: want.Metadata.Version}, "")
	if got.Name() != want.Name() || got.Metadata.Version != want.Metadata.Version {
		t.Errorf("pulled %s %s, want %s %s", got.Name(), got.Metadata.Version, want.Name(), want.Metadata.Version)
	}
	_, err = FetchChart(context.Background(), ChartRef{Chart: fmt.Sprintf("oci://%s/charts/%s", addr, want.Name()), Version: "9.9.9"}, "")
	if err == nil {
		t.Error("a missing tag was fetched")
	}
}
