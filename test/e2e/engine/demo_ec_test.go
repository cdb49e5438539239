package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// TestDemoEmbeddedCluster runs `upshift demo --profile embedded-cluster`
// as a user would, with k0s's and embedded-cluster's real CRDs (from
// ../shared/data, concatenated as one exported file): 2.16.0 installed,
// 2.17.0 reached in embedded-cluster's order (the autopilot step finds
// the kwok nodes on its k0s, as the demo says, and the dropped extension
// is uninstalled), 2.17.1 rolled back. Without --crds it refuses before
// any cluster starts, saying how to export them.
func TestDemoEmbeddedCluster(t *testing.T) {
	t.Parallel()
	testenv.SkipIfShort(t)
	var crds []string
	for _, rel := range []string{testenv.AutopilotPlanCRD, "k0s/k0s.k0sproject.io_clusterconfigs.yaml", "embedded-cluster/embeddedcluster.replicated.com_installations.yaml"} {
		data, err := os.ReadFile(testenv.UpstreamFile(t, rel, "the embedded-cluster profile's demo"))
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, string(data))
	}
	bin := upshiftBinary(t)
	dir, err := os.MkdirTemp("", testenv.DirPrefix+"demo-ec-")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "ec-crds.yaml")
	write(t, file, strings.Join(crds, "\n---\n"))
	env := append(os.Environ(), "UPSHIFT_CLUSTERS_DIR="+dir, "KUBECONFIG=")
	t.Cleanup(func() {
		down := exec.Command(bin, "cluster", "down", "--name", "demo-ec")
		down.Env = env
		_, _ = down.CombinedOutput()
		os.RemoveAll(dir)
	})
	refused := exec.Command(bin, "demo", "--profile", "embedded-cluster")
	refused.Env = env
	if out, err := refused.CombinedOutput(); err == nil || !strings.Contains(string(out), "kubectl get crd plans.autopilot.k0sproject.io") {
		t.Fatalf("the demo without --crds: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "demo", "--profile", "embedded-cluster", "--crds", file)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("upshift demo --profile embedded-cluster: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{
		"$ upshift apply -f examples/embedded-cluster/install/plan.yaml",
		"reached version 2.16.0+k8s-1.33",
		"$ upshift upgrade --catalog examples/embedded-cluster --to 2.17.0+k8s-1.34",
		"every node (3) runs k0s v1.34.1+k0s.0 already: no autopilot Plan written",
		"artifacts on every node (3: node-0, node-1, node-2)",
		"uninstalled release ingress-nginx/legacy-metrics",
		"values from the cluster: disasterRecovery=true (spec.licenseInfo.isDisasterRecoverySupported of Installation",
		"stage Disaster Recovery: step velero succeeded",
		"reached version 2.17.0+k8s-1.34",
		"step admin-console failed",
		"Installation", "marked Failed",
		"exit code 2, as expected",
		"stop it with: upshift cluster down --name demo-ec",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", s)
	}
}
