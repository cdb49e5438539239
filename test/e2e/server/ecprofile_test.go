package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/steps/autopilot"
	"github.com/upshift-dev/upshift/internal/steps/clusterconfig"
	"github.com/upshift-dev/upshift/internal/steps/installation"
	"github.com/upshift-dev/upshift/internal/supportbundle"
)

// ecComponents is embedded-cluster's progress list for this cluster, in
// its order (its infra manager's initUpgradeComponentsList): online, not
// HA, and a license with disaster recovery, which the catalog reads from
// the 2.16.0 Installation (spec.valuesFrom).
var ecComponents = []string{"Runtime", "Storage", "Runtime Operator", "Disaster Recovery", "Admin Console", "Additional Components"}

// ecWorld is the package's cluster made an embedded-cluster platform at
// 2.16.0: k0s's and embedded-cluster's real CRDs, k0s's ClusterConfig,
// the nodes on k0s v1.33.5 (node-0 the controller), the add-ons and an
// Installed Installation from examples/embedded-cluster/install, and the
// autopilot stand-in.
type ecWorld struct {
	*env
	dyn     dynamic.Interface
	standIn *testenv.AutopilotStandIn
}

func newECWorld(t *testing.T) *ecWorld {
	e := newEnv(t)
	cfg := testenv.Cluster(t).RESTConfig()
	for _, crd := range []string{testenv.AutopilotPlanCRD, "k0s/k0s.k0sproject.io_clusterconfigs.yaml", "embedded-cluster/embeddedcluster.replicated.com_installations.yaml"} {
		testenv.InstallUpstreamCRD(t, cfg, crd, "the embedded-cluster profile's upgrade")
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &ecWorld{env: e, dyn: dyn}
	data, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "embedded-cluster", "install", "k0s-clusterconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := source.Decode(data)
	if err != nil || len(cc) != 1 {
		t.Fatalf("k0s-clusterconfig.yaml: %d objects, %v", len(cc), err)
	}
	if _, err := dyn.Resource(clusterconfig.GVR).Namespace("kube-system").Create(e.ctx, cc[0], metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes, err := e.cs.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if err := testenv.SetKubeletVersion(e.ctx, e.cs, n.Name, "v1.33.5+k0s"); err != nil {
			t.Fatal(err)
		}
	}
	patch := []byte(`{"metadata":{"labels":{"` + autopilot.ControlPlaneLabel + `":""}}}`)
	if _, err := e.cs.CoreV1().Nodes().Patch(e.ctx, "node-0", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := runBinary(e, "apply", "-f", filepath.Join(repoRoot(), "examples", "embedded-cluster", "install", "plan.yaml"), "--runs-namespace", e.runsNS)
	if err != nil {
		t.Fatalf("install 2.16.0: %v\n%s", err, out)
	}
	w.standIn = testenv.StartAutopilotStandIn(t, dyn, e.cs)
	return w
}

// componentNames are a progress's components, in order.
func componentNames(p progress) []string {
	var out []string
	for _, c := range p.Components {
		out = append(out, c.Name)
	}
	return out
}

// jobsSeen records every Job created in the embedded-cluster namespace.
func (w *ecWorld) jobsSeen(t *testing.T) func() []batchv1.Job {
	wt, err := w.cs.BatchV1().Jobs("embedded-cluster").Watch(w.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []batchv1.Job
	go func() {
		for ev := range wt.ResultChan() {
			if j, ok := ev.Object.(*batchv1.Job); ok && ev.Type == watch.Added {
				mu.Lock()
				seen = append(seen, *j)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(wt.Stop)
	return func() []batchv1.Job { mu.Lock(); defer mu.Unlock(); return slices.Clone(seen) }
}

func (w *ecWorld) clusterConfig(t *testing.T, path ...string) any {
	t.Helper()
	cc, err := w.dyn.Resource(clusterconfig.GVR).Namespace("kube-system").Get(context.Background(), "k0s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := unstructured.NestedFieldNoCopy(cc.Object, append([]string{"spec"}, path...)...)
	return v
}

// installations are the Installations, oldest first, as name=state.
func (w *ecWorld) installations(t *testing.T) []string {
	t.Helper()
	list, err := w.dyn.Resource(installation.GVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range list.Items {
		st, _, _ := unstructured.NestedString(in.Object, "status", "state")
		v, _, _ := unstructured.NestedString(in.Object, "spec", "config", "version")
		out = append(out, v+"="+st)
	}
	slices.Sort(out)
	return out
}

func (w *ecWorld) image(t *testing.T, ns, name string) string {
	t.Helper()
	d, err := w.cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// upgradeTo starts the infrastructure upgrade to version and waits
// until it ends (waitInfra).
func upgradeTo(t *testing.T, s *server, doc *ecDocument, token, version string) progress {
	t.Helper()
	s.must(http.StatusOK, "POST", infraUpgrade, token, map[string]any{"targetVersion": version}, nil)
	return waitInfra(t, s, doc, token)
}

// waitInfra polls infra/status until the upgrade ends, each answer
// validated against embedded-cluster's OpenAPI document.
func waitInfra(t *testing.T, s *server, doc *ecDocument, token string) progress {
	t.Helper()
	var p progress
	for range 1200 {
		code, body := s.call("GET", infraStatus, token, nil)
		if err := doc.validateResponse("GET", infraStatus, code, body); err != nil {
			t.Fatalf("infra/status is not embedded-cluster's types.Infra: %v", err)
		}
		p = progress{}
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		if p.Status.State != "Running" {
			return p
		}
		sleep()
	}
	t.Fatalf("the upgrade never ended: %+v\n%s", p, s.log)
	return p
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func sleep() { time.Sleep(300 * time.Millisecond) }

// repoRoot is three directories up from this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func (w *ecWorld) autopilotPlanLeft(t *testing.T) bool {
	t.Helper()
	_, err := w.dyn.Resource(autopilot.GVR).Get(context.Background(), autopilot.PlanName, metav1.GetOptions{})
	return err == nil
}

// infraBundle downloads the support bundle infra/status lists.
func (w *ecWorld) infraBundle(t *testing.T, s *server, p progress, token string) map[string]string {
	t.Helper()
	b := p.SupportBundle
	if b == nil || b.URL == "" || b.Error != "" || b.Files == 0 || !strings.HasPrefix(b.Name, "upshift-support-infra-") {
		t.Fatalf("infra/status lists no support bundle: %+v", b)
	}
	code, body := s.call("GET", b.URL, token, nil)
	if code != http.StatusOK || len(body) != b.Bytes {
		t.Fatalf("support bundle %s: %d, %d bytes, listed with %d", b.URL, code, len(body), b.Bytes)
	}
	return testenv.Untar(t, body)
}

// keptBundles are the IDs of the support bundles kept in the runs
// namespace.
func (w *ecWorld) keptBundles(t *testing.T) []string {
	t.Helper()
	list, err := w.cs.CoreV1().Secrets(w.runsNS).List(context.Background(), metav1.ListOptions{LabelSelector: supportbundle.LabelBundle})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sec := range list.Items {
		if id := sec.Labels[supportbundle.LabelBundle]; !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
