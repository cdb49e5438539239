package engine_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/steps/autopilot"
	"github.com/upshift-dev/upshift/internal/steps/clusterconfig"
)

// autopilotWorld is a cluster with k0s's real Plan CRD, two nodes on
// k0s v1.33.5 (node-0 the controller) and the autopilot stand-in.
func autopilotWorld(t *testing.T) (*world, *testenv.AutopilotStandIn) {
	w := newWorld(t, localcluster.Options{Nodes: 2, Name: "autopilot"})
	testenv.InstallUpstreamCRD(t, w.c.RESTConfig(), testenv.AutopilotPlanCRD, "the autopilot step through apply")
	for _, n := range []string{"node-0", "node-1"} {
		if err := testenv.SetKubeletVersion(w.ctx, w.cs, n, "v1.33.5+k0s"); err != nil {
			t.Fatal(err)
		}
	}
	patch := []byte(`{"metadata":{"labels":{"` + autopilot.ControlPlaneLabel + `":""}}}`)
	if _, err := w.cs.CoreV1().Nodes().Patch(w.ctx, "node-0", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.InstallUpstreamCRD(t, w.c.RESTConfig(), "k0s/k0s.k0sproject.io_clusterconfigs.yaml", "the clusterConfig step through apply")
	cc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k0s.k0sproject.io/v1beta1", "kind": "ClusterConfig", "metadata": map[string]any{"name": "k0s", "namespace": "kube-system"},
		"spec": map[string]any{"images": map[string]any{"pause": map[string]any{"image": "registry.k8s.io/pause", "version": "3.9"}}},
	}}
	if _, err := w.dyn.Resource(clusterconfig.GVR).Namespace("kube-system").Create(w.ctx, cc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return w, testenv.StartAutopilotStandIn(t, w.dyn, w.cs)
}

// k0sPlan writes a plan whose one stage is embedded-cluster's k0s
// upgrade: the new pause image into k0s's ClusterConfig, autopilot moving
// the nodes to version, then the rest of the ClusterConfig.
func (w *world) k0sPlan(name, version, pause string) string {
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: %s}
spec:
  version: %s
  stages:
  - name: k0s
    steps:
    - name: pause
      clusterConfig: {images: {pause: {image: registry.k8s.io/pause, version: "%s"}}}
    - name: k0s
      timeout: 2m
      autopilot:
        version: %s
        platforms: {linux-amd64: {url: "https://artifacts.example/k0s-%s"}}
    - name: config
      clusterConfig: {overrides: [{telemetry: {enabled: false}}]}
`, name, strings.TrimPrefix(strings.Split(version, "+")[0], "v"), pause, version, version))
	return filepath.Join(dir, "plan.yaml")
}

func (w *world) pauseVersion() any {
	cc, err := w.dyn.Resource(clusterconfig.GVR).Namespace("kube-system").Get(w.ctx, "k0s", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	v, _, _ := unstructured.NestedFieldNoCopy(cc.Object, "spec", "images", "pause", "version")
	return v
}

func (w *world) autopilotPlan() string {
	p, err := w.dyn.Resource(autopilot.GVR).Get(w.ctx, autopilot.PlanName, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return string(p.GetUID())
}

// `upshift apply` killed while autopilot works resumes watching the same
// Plan (never a second one) and ends as an uninterrupted run: every node
// on the version, the Plan deleted, the ClusterConfig updated. Then a
// Plan autopilot fails rolls the stage back: the ClusterConfig's pause
// image restored, the Plan deleted, and the rollback says which nodes
// k0s could not be moved back on.
func TestAutopilotStepThroughApply(t *testing.T) {
	t.Parallel()
	w, standIn := autopilotWorld(t)
	standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = true })
	plan := w.k0sPlan("k0s-134", "v1.34.1+k0s.0", "3.10")
	bg := w.startUpshift("apply", "-f", plan)
	w.eventually("the Plan written", func() (bool, string) { return w.autopilotPlan() != "", bg.out.String() })
	uid := w.autopilotPlan()
	_ = bg.cmd.Process.Kill()
	<-bg.done
	standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = false })
	r := w.mustExit(0, nil, "apply", "-f", plan)
	if seen := standIn.Seen(); len(seen) != 1 || string(seen[0].GetUID()) != uid {
		t.Errorf("autopilot saw %d Plans, want the one written before the kill:\n%s", len(seen), r)
	}
	if w.autopilotPlan() != "" {
		t.Error("the Plan is left behind after the upgrade")
	}
	if v := w.pauseVersion(); v != "3.10" {
		t.Errorf("the ClusterConfig's pause image is %v, want 3.10", v)
	}
	for _, n := range []string{"node-0", "node-1"} {
		if node, _ := w.cs.CoreV1().Nodes().Get(w.ctx, n, metav1.GetOptions{}); node.Status.NodeInfo.KubeletVersion != "v1.34.1+k0s" {
			t.Errorf("node %s reports %s", n, node.Status.NodeInfo.KubeletVersion)
		}
	}

	standIn.Set(func(a *testenv.AutopilotStandIn) { a.End, a.FailNode = "ApplyFailed", "node-1" })
	w.mustExit(2, nil, "apply", "-f", w.k0sPlan("k0s-135", "v1.35.0+k0s.0", "3.11"))
	run := w.run("k0s-135")
	st := run.Status.Stages[0]
	mustContain(t, "the failed step", st.Steps[1].Message, "Upgrade apply has failed", "SignalApplyFailed: node-1")
	mustContain(t, "the rollback", st.Message+run.Status.Message, "k0s not rolled back: node-0 run(s) v1.35.0+k0s.0")
	if w.autopilotPlan() != "" {
		t.Error("the rollback left the failed Plan")
	}
	if v := w.pauseVersion(); v != "3.10" {
		t.Errorf("the rollback left the ClusterConfig's pause image at %v, want it restored to 3.10", v)
	}
}
