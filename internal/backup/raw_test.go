package backup_test

import (
	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/step"
)

// A snapshot holds a taken object as the API server's own JSON, not the
// decoded object marshalled again, and loads back as that object.
func TestTakenObjectsKeepTheServersBytes(t *testing.T) {
	e := newEnv(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: e.ns}, Data: map[string]string{"zeta": "1", "alpha": "2"}}
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := step.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: e.ns, Name: "settings"}
	snap, err := e.b.Take(ctx(t), []step.Ref{r, {APIVersion: "v1", Kind: "ConfigMap", Namespace: e.ns, Name: "absent"}}, backup.Fresh)
	if err != nil {
		t.Fatal(err)
	}
	served, err := e.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/" + e.ns + "/configmaps/settings").Do(ctx(t)).Raw()
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(encoded, bytes.TrimSpace(served)) {
		t.Errorf("the snapshot does not hold the server's bytes:\n%s\nserved:\n%s", encoded, served)
	}
	var back struct {
		Entries []struct {
			Object map[string]any `json:"object"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(encoded, &back); err != nil {
		t.Fatalf("the snapshot's JSON does not decode: %v\n%s", err, encoded)
	}
	if len(back.Entries) != 2 || back.Entries[0].Object["data"].(map[string]any)["zeta"] != "1" || back.Entries[1].Object != nil {
		t.Errorf("decoded entries %v, want the ConfigMap and an absent one", back.Entries)
	}
}
