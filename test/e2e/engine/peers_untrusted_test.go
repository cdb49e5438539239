package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// TestUpgradeRefusesUntrustedPeerKubeconfigs: a catalog's peer
// kubeconfigs are Secrets of the cluster, written by whoever may write
// Secrets there, and read on the operator's machine by `upshift upgrade`.
// One whose tokenFile names a file of that machine and whose server is a
// listener of the test, and one with an exec stanza, are refused before
// any write, each naming its Secret, key and field: the listener never
// accepts a connection, the token never leaves, the program never runs.
func TestUpgradeRefusesUntrustedPeerKubeconfigs(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{Name: "peers-untrusted", Nodes: 1})
	lure := testenv.NewLure(t)
	if _, err := w.cs.CoreV1().Namespaces().Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hops-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, kubeconfig := range map[string][]byte{"peer-tokenfile": lure.TokenFileKubeconfig(), "peer-exec": lure.ExecKubeconfig()} {
		if _, err := w.cs.CoreV1().Secrets("hops-system").Create(w.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"hops.example.com/peer": "true"}},
			Data:       map[string][]byte{"kubeconfig": kubeconfig},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cat := w.writeHopsCatalog("")
	write(t, filepath.Join(cat, "catalog.yaml"), strings.Replace(hopsCatalog, "  planTemplate:", `  peers:
    kubeconfigSecrets: {namespace: hops-system, selector: hops.example.com/peer=true}
  planTemplate:`, 1))

	writes := len(w.upshiftWrites())
	r := w.mustExit(1, nil, "upgrade", "--to", "1.0.0", "--install", "--catalog", cat)
	mustContain(t, "upgrade with hostile peer kubeconfigs", r.stderr, "cannot read the version of 2 peers",
		"peer peer-tokenfile (kubeconfig in Secret hops-system/peer-tokenfile): key kubeconfig: users[ops].tokenFile: a kubeconfig read from the cluster may not read a file",
		"peer peer-exec (kubeconfig in Secret hops-system/peer-exec): key kubeconfig: users[ops].exec: a kubeconfig read from the cluster may not run a program")
	if used := lure.Used(); used != "" {
		t.Errorf("upshift upgrade used the refused kubeconfigs: %s", used)
	}
	if n := len(w.upshiftWrites()); n != writes {
		t.Errorf("the refused upgrade wrote to the cluster: %d writes before, %d after", writes, n)
	}
}
