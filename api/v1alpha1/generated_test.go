package v1alpha1_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/config/crd"
)

// repoRoot is where the Makefile and go.mod are, two levels up.
const repoRoot = "../.."

// controllerGenVersion is the version the Makefile pins.
func controllerGenVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CONTROLLER_GEN_VERSION\s*:?=\s*(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile pins no CONTROLLER_GEN_VERSION")
	}
	return string(m[1])
}

// TestCommittedFilesAreGenerated: zz_generated.deepcopy.go and the CRDs
// under config/crd/bases are what the pinned controller-gen makes of the
// markers now (run `make generate` after changing the types). It runs
// controller-gen from the module cache only, never the network: `make
// test` and `make unit` fetch it first (`make controller-gen`).
func TestCommittedFilesAreGenerated(t *testing.T) {
	version := controllerGenVersion(t)
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", "sigs.k8s.io/controller-tools/cmd/controller-gen@"+version,
		"object", "crd", "paths=./api/...",
		"output:object:dir="+filepath.Join(out, "object"),
		"output:crd:dir="+filepath.Join(out, "crd"))
	cmd.Dir = repoRoot
	// The module cache served as a proxy: what `make controller-gen`
	// downloaded is found, nothing else is fetched.
	cmd.Env = append(os.Environ(), "GOPROXY=file://"+filepath.ToSlash(strings.TrimSpace(string(gomodcache)))+"/cache/download")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen %s did not run (%v): run `make controller-gen` to fetch it, then `make generate`:\n%s", version, err, b)
	}

	compare := func(committed, generated string) {
		t.Helper()
		want, err := os.ReadFile(generated)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(generated, ".yaml") {
			if want, err = crd.Finish(want); err != nil { // as `make generate` does
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(filepath.Join(repoRoot, committed))
		switch {
		case err != nil:
			t.Errorf("%v: run `make generate`", err)
		case !bytes.Equal(got, want):
			t.Errorf("%s differs from controller-gen %s's output: run `make generate`", committed, version)
		}
	}
	compare("api/v1alpha1/zz_generated.deepcopy.go", filepath.Join(out, "object", "zz_generated.deepcopy.go"))
	crds, err := filepath.Glob(filepath.Join(out, "crd", "*.yaml"))
	if err != nil || len(crds) != 5 {
		t.Fatalf("controller-gen made %d CRDs (%v), want UpgradePlan's, UpgradeRun's, PlatformUpgrade's, ClusterVersion's and AppRollout's", len(crds), err)
	}
	for _, f := range crds {
		compare(filepath.Join("config", "crd", "bases", filepath.Base(f)), f)
	}
	committed, _ := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
	for _, f := range committed {
		if _, err := os.Stat(filepath.Join(out, "crd", filepath.Base(f))); err != nil {
			t.Errorf("%s is not generated any more: delete it, or run `make generate`", f)
		}
	}
}
