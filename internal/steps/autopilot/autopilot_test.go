package autopilot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/autopilot"
)

func TestMain(m *testing.M) {
	autopilot.Poll = 100 * time.Millisecond
	testenv.Main(m)
}

const (
	from = "v1.33.5+k0s"
	to   = "v1.34.1+k0s.0"
	sha  = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// env is the package's cluster with k0s's real Plan CRD (so the API
// server validates every Plan the step writes), its nodes on from and
// node-0 a controller, and the autopilot stand-in.
type env struct {
	*clienttest.Env
	standIn *testenv.AutopilotStandIn
	nodes   []string
}

// The tests of this package run one at a time: there is one Plan named
// autopilot per cluster, and they move the nodes' versions.
func newEnv(t *testing.T) *env {
	e := &env{Env: clienttest.New(t)}
	testenv.InstallUpstreamCRD(t, testenv.Cluster(t).RESTConfig(), testenv.AutopilotPlanCRD, "the autopilot step's tests (the Plan it writes must validate against k0s's CRD)")
	ctx := context.Background()
	list, err := e.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Items {
		e.nodes = append(e.nodes, n.Name)
		if err := testenv.SetKubeletVersion(ctx, e.Clientset, n.Name, from); err != nil {
			t.Fatal(err)
		}
	}
	patch := []byte(`{"metadata":{"labels":{"` + autopilot.ControlPlaneLabel + `":""}}}`)
	if _, err := e.Clientset.CoreV1().Nodes().Patch(ctx, "node-0", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Dynamic.Resource(autopilot.GVR).Delete(context.Background(), autopilot.PlanName, metav1.DeleteOptions{})
	})
	e.standIn = testenv.StartAutopilotStandIn(t, e.Dynamic, e.Clientset)
	return e
}

func spec() v1alpha1.AutopilotStep {
	return v1alpha1.AutopilotStep{
		Version:      to,
		Platforms:    map[string]v1alpha1.AutopilotArtifact{"linux-amd64": {URL: "https://artifacts.example/k0s-" + to, SHA256: sha}},
		Installation: "20261129120000",
	}
}

func (e *env) executor(t *testing.T, s v1alpha1.AutopilotStep, attempt int) *autopilot.Executor {
	t.Helper()
	ex, err := autopilot.New(s, step.RunAttempt{Run: "run-" + e.NS, Attempt: attempt}, "k0s", time.Time{}, time.Minute,
		autopilot.Clients{Applier: e.Applier, Dynamic: e.Dynamic, Clientset: e.Clientset})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// drive calls Run as the engine does until the step ends, and returns
// every message it reported on the way.
func drive(t *testing.T, ex *autopilot.Executor) (step.Result, []string) {
	t.Helper()
	var seen []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		res, err := ex.Run(context.Background())
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		seen = append(seen, res.Message)
		if res.Status != step.Running {
			return res, seen
		}
		time.Sleep(res.After)
	}
	t.Fatalf("the step did not end in a minute: %v", seen)
	return step.Result{}, nil
}

func (e *env) plan(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	p, err := e.Dynamic.Resource(autopilot.GVR).Get(context.Background(), autopilot.PlanName, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

func (e *env) versions(t *testing.T) map[string]string {
	t.Helper()
	list, err := e.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range list.Items {
		out[n.Name] = n.Status.NodeInfo.KubeletVersion
	}
	return out
}

func nested(t *testing.T, o map[string]any, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(o, path...)
	if err != nil || !ok {
		t.Fatalf("no %s in %v", strings.Join(path, "."), o)
	}
	return v
}
