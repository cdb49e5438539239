package backup_test

import (
	crand "crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestTakeSaveLoadRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createConfigMap(t, "settings", map[string]string{"level": "debug"})
	e.createDeployment(t, "web", "registry.example/web:1.0")
	refs := []step.Ref{
		e.configMapRef("settings"),
		ref("apps/v1", "Deployment", e.ns, "web"),
		e.configMapRef("created-later"),                         // absent: the stage may create it
		ref("widgets.example.invalid/v1", "Widget", e.ns, "w1"), // kind not served yet: absent
		e.configMapRef("settings"),                              // duplicate
	}
	snap, err := e.b.Take(ctx(t), refs, backup.Fresh)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	if len(snap.Entries) != 4 {
		t.Fatalf("Take: %d entries, want 4 (deduplicated): %s", len(snap.Entries), mustJSON(t, snap))
	}
	for i, want := range refs[:4] {
		got := snap.Entries[i]
		if got.Ref != want {
			t.Errorf("entry %d is %s, want %s (order kept)", i, got.Ref, want)
		}
		if exists := i < 2; (got.Object != nil) != exists {
			t.Errorf("entry %d (%s): object present = %t, want %t", i, got.Ref, got.Object != nil, exists)
		}
	}
	if got := snap.Entries[0].Object.Object["data"]; fmt.Sprint(got) != "map[level:debug]" {
		t.Errorf("snapshot of the ConfigMap holds data %v", got)
	}

	key := backup.Key{Run: "upgrade-to-v2", Stage: "Data Plane", Attempt: 1}
	br, err := e.b.Save(ctx(t), key, snap)
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	if br.Objects != 2 || br.Absent != 2 || len(br.Secrets) != 1 || len(br.SHA256) != 64 || br.CreatedAt == nil {
		t.Errorf("Save returned %+v, want 2 objects, 2 absent, 1 Secret, a sha256 and a time", br)
	}
	sec, err := e.cs.CoreV1().Secrets(e.backupNS).Get(ctx(t), br.Secrets[0], metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the backup Secret: %v", err)
	}
	if sec.Type != backup.SecretType {
		t.Errorf("Secret type %q, want %q", sec.Type, backup.SecretType)
	}
	for k, want := range map[string]string{backup.LabelRun: "upgrade-to-v2", backup.LabelAttempt: "1"} {
		if sec.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, sec.Labels[k], want)
		}
	}
	if len(validation.IsValidLabelValue(sec.Labels[backup.LabelStage])) > 0 {
		t.Errorf("stage label %q is not a valid label value", sec.Labels[backup.LabelStage])
	}
	if sec.Annotations[backup.AnnotationSnapshotSHA256] != br.SHA256 || len(sec.Annotations[backup.AnnotationChunkSHA256]) != 64 {
		t.Errorf("Secret annotations %v lack the checksums", sec.Annotations)
	}

	loaded, err := e.b.Load(ctx(t), br)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got, want := mustJSON(t, loaded), mustJSON(t, snap); got != want {
		t.Errorf("Load differs from what was saved:\n got %s\nwant %s", got, want)
	}

	// A crashed Save is redone onto the same Secrets.
	again, err := e.b.Save(ctx(t), key, snap)
	if err != nil {
		t.Fatalf("Save again: %v", err)
	}
	if fmt.Sprint(again.Secrets) != fmt.Sprint(br.Secrets) || again.SHA256 != br.SHA256 {
		t.Errorf("Save again wrote %v (%s), want %v (%s)", again.Secrets, again.SHA256, br.Secrets, br.SHA256)
	}

	// List and DeleteRun, as `upshift backup list` and pruning use them.
	other := backup.Key{Run: "another-run", Stage: "crds", Attempt: 1}
	if _, err := e.b.Save(ctx(t), other, snap); err != nil {
		t.Fatalf("Save another run: %v", err)
	}
	infos, err := e.b.List(ctx(t))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(infos) != 2 {
		t.Fatalf("List: %d backups, want 2: %+v", len(infos), infos)
	}
	var found bool
	for _, in := range infos {
		if in.Key == key {
			found = true
			if in.Objects != 2 || fmt.Sprint(in.Secrets) != fmt.Sprint(br.Secrets) || in.Bytes <= 0 || in.CreatedAt.IsZero() {
				t.Errorf("List: %+v, want 2 objects in %v with a size and a time", in, br.Secrets)
			}
		}
	}
	if !found {
		t.Errorf("List: %+v lacks key %+v", infos, key)
	}
	if err := e.b.DeleteRun(ctx(t), key.Run); err != nil {
		t.Fatalf("DeleteRun: %v", err)
	}
	infos, err = e.b.List(ctx(t))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(infos) != 1 || infos[0].Key != other {
		t.Errorf("after DeleteRun(%s), List = %+v, want only %+v", key.Run, infos, other)
	}
	if _, err := e.b.Load(ctx(t), br); !errors.Is(err, backup.ErrCorrupt) {
		t.Errorf("Load of a deleted backup: %v, want ErrCorrupt", err)
	}
}

// TestLargeSnapshot saves random (incompressible) data too big for one
// Secret, then alters and removes chunks.
func TestLargeSnapshot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 300
	refs := make([]step.Ref, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		refs[i] = e.configMapRef(fmt.Sprintf("cm-%03d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			data := make([]byte, 6<<10)
			_, _ = crand.Read(data)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: refs[i].Name, Namespace: e.ns}, BinaryData: map[string][]byte{"blob": data}}
			if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	snap, br := e.takeAndSave(t, backup.Key{Run: "big", Stage: "apps", Attempt: 1}, refs...)
	if len(br.Secrets) < 2 {
		t.Fatalf("Save wrote %d Secret(s), want several", len(br.Secrets))
	}
	t.Logf("%d objects in %d Secrets", br.Objects, len(br.Secrets))
	if br.Objects != n {
		t.Errorf("Save: %d objects, want %d", br.Objects, n)
	}
	secrets := e.cs.CoreV1().Secrets(e.backupNS)
	for _, name := range br.Secrets {
		s, err := secrets.Get(ctx(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for _, v := range s.Data {
			size += len(v)
		}
		if size >= 1<<20 {
			t.Errorf("Secret %s holds %d bytes, want under 1 MiB", name, size)
		}
	}
	if len(snap.Entries) != n || snap.Entries[n-1].Object == nil {
		t.Fatalf("loaded snapshot has %d entries, want %d objects", len(snap.Entries), n)
	}

	victim := br.Secrets[1]
	victimID := e.backupNS + "/" + victim
	orig, err := secrets.Get(ctx(t), victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("flipped byte", func(t *testing.T) {
		bad := orig.DeepCopy()
		for k := range bad.Data {
			bad.Data[k][len(bad.Data[k])/2] ^= 0x01
		}
		if _, err := secrets.Update(ctx(t), bad, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := e.b.Load(ctx(t), br)
		t.Log(err)
		assertCorrupt(t, err, victimID, "checksum")

		// Put the chunk back: the backup loads again.
		fixed, err := secrets.Get(ctx(t), victim, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fixed.Data = orig.Data
		if _, err := secrets.Update(ctx(t), fixed, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.b.Load(ctx(t), br); err != nil {
			t.Fatalf("Load after repair: %v", err)
		}
	})

	t.Run("missing chunk", func(t *testing.T) {
		if err := secrets.Delete(ctx(t), victim, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := e.b.Load(ctx(t), br)
		assertCorrupt(t, err, victimID, "missing")
	})
}

func assertCorrupt(t *testing.T, err error, secret, problem string) {
	t.Helper()
	if !errors.Is(err, backup.ErrCorrupt) {
		t.Fatalf("Load: %v, want ErrCorrupt", err)
	}
	var ce *backup.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("Load: %T, want *CorruptError", err)
	}
	if !strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), problem) {
		t.Errorf("Load: %q, want it to name %s and say %q", err, secret, problem)
	}
}
