package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedFilesAreGenerated: the files under test/bench/liqo are
// what the generator writes now (run `go generate ./test/bench/liqo/gen`
// after changing it), and the scenario keeps Liqo's 28 CRDs.
func TestCommittedFilesAreGenerated(t *testing.T) {
	t.Setenv("GOPROXY", "off") // only the module cache: no network in tests
	files, err := generate()
	if errors.Is(err, errModuleMissing) {
		// The generator reads the OpenAPI documents of the control
		// plane's Kubernetes module; `make test` builds the control plane
		// first, which puts the module in the cache. `make unit` (go test
		// -short, pure logic, no control plane) on a fresh machine does
		// not: only there is its absence not a failure.
		if testing.Short() {
			t.Skipf("-short on a machine without the control plane's Kubernetes module (`make cluster-binaries` fetches it): %v", err)
		}
		t.Fatalf("the generator's input is missing: run `make cluster-binaries` first: %v", err)
	}
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	root := ".."
	for _, release := range []string{"v1.0.0", "v1.1.0"} {
		crds, _ := filepath.Glob(filepath.Join(root, release, "crds", "*.yaml"))
		if len(crds) != 28 {
			t.Errorf("%s has %d CRDs, want Liqo's 28", release, len(crds))
		}
	}
	for _, d := range generatedDirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if _, ok := files[rel]; !ok {
				t.Errorf("%s is not generated any more: run go generate ./test/bench/liqo/gen", rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output: run go generate ./test/bench/liqo/gen", rel)
		}
	}
}
