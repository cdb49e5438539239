package clusterconfig_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/clusterconfig"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newConfig installs k0s's real ClusterConfig CRD (so the API server
// judges every spec the step writes) and creates a ClusterConfig of the
// test's own, as k0s leaves kube-system/k0s after an install.
func newConfig(t *testing.T) (*clienttest.Env, *unstructured.Unstructured) {
	e := clienttest.New(t)
	testenv.InstallUpstreamCRD(t, testenv.Cluster(t).RESTConfig(), "k0s/k0s.k0sproject.io_clusterconfigs.yaml", "the clusterConfig step's tests")
	cc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k0s.k0sproject.io/v1beta1", "kind": "ClusterConfig",
		"metadata": map[string]any{"name": "k0s", "namespace": e.NS},
		"spec": map[string]any{
			"images":    map[string]any{"pause": map[string]any{"image": "registry.k8s.io/pause", "version": "3.9"}, "coredns": map[string]any{"image": "quay.io/k0sproject/coredns", "version": "1.11.3"}},
			"telemetry": map[string]any{"enabled": true},
		},
	}}
	live, err := e.Dynamic.Resource(clusterconfig.GVR).Namespace(e.NS).Create(context.Background(), cc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e, live
}

func js(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func spec(ns string) v1alpha1.ClusterConfigStep {
	return v1alpha1.ClusterConfigStep{
		Namespace: ns,
		Images:    js(`{"pause":{"image":"registry.k8s.io/pause","version":"3.10"},"coredns":{"image":"quay.io/k0sproject/coredns","version":"1.12.1"}}`),
		Overrides: []apiextensionsv1.JSON{
			*js(`{"telemetry":{"enabled":false},"network":{"clusterDomain":"vendor.local"}}`), // the vendor's
			*js(`{"network":{"clusterDomain":"cluster.local"}}`),                              // the end user's, over it
		},
	}
}

func executor(t *testing.T, e *clienttest.Env, s v1alpha1.ClusterConfigStep) *clusterconfig.Executor {
	t.Helper()
	ex, err := clusterconfig.New(s, time.Minute, e.Dynamic)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func field(t *testing.T, o *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	return v
}

// The images, then the vendor's override, then the end user's over it,
// merged into spec; the new pause image written first, alone. Run again,
// nothing is written.
func TestClusterConfigPauseFirstThenImagesAndOverrides(t *testing.T) {
	e, live := newConfig(t)
	w, err := e.Dynamic.Resource(clusterconfig.GVR).Namespace(e.NS).Watch(context.Background(), metav1.ListOptions{ResourceVersion: live.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	res, err := executor(t, e, spec(e.NS)).Run(context.Background())
	if err != nil || res.Status != step.Succeeded || !strings.Contains(res.Message, "the pause image; then spec.images, spec.network, spec.telemetry") {
		t.Fatalf("result %+v, %v", res, err)
	}
	var writes []*unstructured.Unstructured
	for len(writes) < 2 {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Modified {
				writes = append(writes, ev.Object.(*unstructured.Unstructured))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("saw %d writes, want 2", len(writes))
		}
	}
	if field(t, writes[0], "spec", "images", "pause", "version") != "3.10" || field(t, writes[0], "spec", "images", "coredns", "version") != "1.11.3" {
		t.Errorf("first write: images %v, want the pause image alone", field(t, writes[0], "spec", "images"))
	}
	final := writes[1]
	if field(t, final, "spec", "images", "coredns", "version") != "1.12.1" || field(t, final, "spec", "telemetry", "enabled") != false ||
		field(t, final, "spec", "network", "clusterDomain") != "cluster.local" {
		t.Errorf("final spec %v: want the new images, the vendor's telemetry, the end user's cluster domain", final.Object["spec"])
	}
	res, err = executor(t, e, spec(e.NS)).Run(context.Background())
	if err != nil || res.Status != step.Succeeded || !strings.Contains(res.Message, "nothing written") {
		t.Errorf("run again: %+v, %v", res, err)
	}
	select {
	case ev := <-w.ResultChan():
		t.Errorf("run again wrote: %s", ev.Type)
	case <-time.After(time.Second):
	}
}

// A merged spec k0s's CRD refuses fails the step with the server's words;
// a missing ClusterConfig fails it naming where it looked. The preview
// shows the merged change without writing it.
func TestClusterConfigRefusalsAndPreview(t *testing.T) {
	e, live := newConfig(t)
	bad := spec(e.NS)
	bad.Overrides = append(bad.Overrides, *js(`{"images":{"pause":{"version":"not a version!"}}}`))
	res, err := executor(t, e, bad).Run(context.Background())
	if err != nil || res.Status != step.Failed || !strings.Contains(res.Message, "refused the merged spec") || !strings.Contains(res.Message, "spec.images.pause.version") {
		t.Errorf("a spec the CRD refuses: %+v, %v", res, err)
	}
	other := spec(e.NS)
	other.Name = "k0s-elsewhere"
	if res, err = executor(t, e, other).Run(context.Background()); err != nil || res.Status != step.Failed || !strings.Contains(res.Message, "ClusterConfig "+e.NS+"/k0s-elsewhere does not exist") {
		t.Errorf("a missing ClusterConfig: %+v, %v", res, err)
	}

	changes, err := executor(t, e, spec(e.NS)).Preview(context.Background())
	if err != nil || len(changes) != 1 || changes[0].Action != step.Update || !strings.Contains(changes[0].Diff, "cluster.local") || !strings.Contains(changes[0].Note, "pause image is written first") {
		t.Fatalf("preview %+v, %v", changes, err)
	}
	now, _ := e.Dynamic.Resource(clusterconfig.GVR).Namespace(e.NS).Get(context.Background(), "k0s", metav1.GetOptions{})
	if now.GetResourceVersion() != live.GetResourceVersion() {
		t.Error("a refused run or the preview wrote the ClusterConfig")
	}
}
