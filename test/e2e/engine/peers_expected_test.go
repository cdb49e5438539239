package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// TestUpgradeNamesPeersWithoutKubeconfig: the peers are found in the
// cluster's own ForeignClusters (Liqo's real CRD), not only in the
// kubeconfig Secrets somebody labelled. A peer with no Secret blocks the
// upgrade, named, before anything is written; one whose Secret exists is
// read through it (here refused: not a kubeconfig). Where the catalog
// says to warn, the upgrade goes on and names the peers it did not check.
func TestUpgradeNamesPeersWithoutKubeconfig(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{Name: "peers-expected", Nodes: 1})
	testenv.InstallUpstreamCRD(t, w.c.RESTConfig(), "liqo/v1.1.0/crds/core.liqo.io_foreignclusters.yaml", "peers found in ForeignClusters")
	dyn, err := dynamic.NewForConfig(w.c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "core.liqo.io", Version: "v1beta1", Resource: "foreignclusters"}
	for _, id := range []string{"cl-a", "cl-b"} {
		fc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "core.liqo.io/v1beta1", "kind": "ForeignCluster",
			"metadata": map[string]any{"name": id}, "spec": map[string]any{"clusterID": id}}}
		if _, err := dyn.Resource(gvr).Create(w.ctx, fc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.cs.CoreV1().Namespaces().Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hops-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "peer-a", Labels: map[string]string{"hops.example.com/peer": "true", "liqo.io/remote-cluster-id": "cl-a"}},
		Data: map[string][]byte{"kubeconfig": []byte("not a kubeconfig")}}
	if _, err := w.cs.CoreV1().Secrets("hops-system").Create(w.ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cat := w.writeHopsCatalog("")
	peers := func(missing string) {
		write(t, filepath.Join(cat, "catalog.yaml"), strings.Replace(hopsCatalog, "  planTemplate:", `  peers:
    kubeconfigSecrets: {namespace: hops-system, selector: hops.example.com/peer=true}
    expected: {apiVersion: core.liqo.io/v1beta1, kind: ForeignCluster, idField: spec.clusterID, secretLabel: liqo.io/remote-cluster-id`+missing+`}
  planTemplate:`, 1))
	}

	peers("")
	writes := len(w.upshiftWrites())
	r := w.mustExit(1, nil, "upgrade", "--to", "1.0.0", "--install", "--catalog", cat)
	mustContain(t, "upgrade with a peer nobody made a Secret for", r.stderr, "cannot read the version of 2 peers",
		`peer "cl-b": the cluster has ForeignCluster "cl-b", and no Secret in hops-system labelled liqo.io/remote-cluster-id=cl-b and hops.example.com/peer=true holds its kubeconfig under key kubeconfig`,
		"peer peer-a (kubeconfig in Secret hops-system/peer-a)")
	if strings.Contains(r.stderr, `peer "cl-a": the cluster has`) {
		t.Errorf("cl-a, which has its Secret, is named as having none:\n%s", r.stderr)
	}
	if n := len(w.upshiftWrites()); n != writes {
		t.Errorf("the refused upgrade wrote to the cluster: %d writes before, %d after", writes, n)
	}

	if err := w.cs.CoreV1().Secrets("hops-system").Delete(w.ctx, "peer-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	peers(", missing: Warn")
	r = w.mustExit(0, nil, "upgrade", "--to", "1.0.0", "--install", "--catalog", cat)
	mustContain(t, "upgrade warning of unchecked peers", r.stdout+r.stderr, "warning: peers not checked, no kubeconfig Secret (spec.peers.expected.missing: Warn): cl-a, cl-b")
}
