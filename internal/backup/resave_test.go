package backup_test

import (
	crand "crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/backup"
)

// TestSaveAgainLeavesOnlyItsOwnChunks: a Save repeated for the same key
// (a run resumed after a crash mid-backup) with a smaller snapshot
// replaces the first chunk and deletes the chunks the larger one left;
// Load reads the second snapshot.
func TestSaveAgainLeavesOnlyItsOwnChunks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := backup.Key{Run: "again", Stage: "apps", Attempt: 1}

	big := snapshotOf(t, 400, 6<<10) // incompressible: about 3 MiB, several chunks
	first, err := e.b.Save(ctx(t), key, big)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Secrets) < 2 {
		t.Fatalf("the first Save wrote %d Secret(s), want several", len(first.Secrets))
	}

	small := snapshotOf(t, 1, 64)
	second, err := e.b.Save(ctx(t), key, small)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Secrets) != 1 || second.Secrets[0] != first.Secrets[0] {
		t.Fatalf("the second Save wrote %v, want only %s", second.Secrets, first.Secrets[0])
	}
	left, err := e.cs.CoreV1().Secrets(e.backupNS).List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range left.Items {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, second.Secrets) {
		t.Errorf("backup Secrets after the second Save: %v, want %v", names, second.Secrets)
	}
	got, err := e.b.Load(ctx(t), second)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != 1 || got.Entries[0].Ref != small.Entries[0].Ref {
		t.Errorf("Load after the second Save: %d entries, want the second snapshot's one", len(got.Entries))
	}
}

// snapshotOf builds a snapshot of n ConfigMaps of size random bytes each,
// without creating them: Save only encodes what it is given.
func snapshotOf(t *testing.T, n, size int) *backup.Snapshot {
	t.Helper()
	s := &backup.Snapshot{}
	for i := range n {
		data := make([]byte, size)
		if _, err := crand.Read(data); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("cm-%03d", i)
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata":   map[string]any{"name": name, "namespace": "elsewhere"},
			"binaryData": map[string]any{"blob": base64.StdEncoding.EncodeToString(data)},
		}}
		s.Entries = append(s.Entries, backup.Entry{Ref: ref("v1", "ConfigMap", "elsewhere", name), Object: obj})
	}
	return s
}
