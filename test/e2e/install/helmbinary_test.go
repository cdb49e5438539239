package install_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// The helm binary the local cluster builds behaves like a released one:
// `helm template` assumes the Kubernetes version of its release
// (v1.34), not Helm's unstamped default v1.20, so it renders the chart
// (which needs 1.28 or newer) without a cluster and without
// --kube-version.
func TestHelmBinaryKnowsItsKubernetesVersion(t *testing.T) {
	helm := testenv.Cluster(t).Binaries().Path("helm")
	out, err := exec.Command(helm, "template", "upshift", filepath.Join(repoRoot, "charts", "upshift")).CombinedOutput()
	if err != nil {
		t.Fatalf("helm template charts/upshift: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kind: Deployment") {
		t.Errorf("helm template rendered no Deployment:\n%.2000s", out)
	}
	caps, err := exec.Command(helm, "template", "caps", filepath.Join("testdata", "caps")).CombinedOutput()
	if err != nil {
		t.Fatalf("helm template testdata/caps: %v\n%s", err, caps)
	}
	want := "kubeVersion: " + localcluster.KubernetesVersion[:len("v1.34")]
	if !strings.Contains(string(caps), want) {
		t.Errorf("helm's assumed Kubernetes version: %s, want %s", strings.TrimSpace(string(caps)), want)
	}
}
