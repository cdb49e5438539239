package backup_test

import (
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/step"
)

// Find answers a stage attempt's backup taken by this run, whole and
// verified, with the Helm revisions it was taken with, and nothing else: none, one of a run of the same name before
// it (another UID), or one cut short. A whole one altered is corrupt.
func TestFindAnswersThisRunsWholeBackup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createConfigMap(t, "settings", map[string]string{"level": "debug"})
	key := backup.Key{Run: "find-me", Stage: "config", Attempt: 1}

	if ref, err := e.b.Find(ctx(t), key, "uid-1"); err != nil || ref != nil {
		t.Fatalf("Find with no backup: %v, %v; want nothing", ref, err)
	}
	snap, err := e.b.Take(ctx(t), []step.Ref{e.configMapRef("settings")}, backup.Fresh)
	if err != nil {
		t.Fatal(err)
	}
	snap.RunUID = "uid-1"
	revisions := []v1alpha1.HelmRevision{{Release: "cache", Namespace: "shop", Revision: 3}, {Release: "new", Namespace: "shop"}}
	snap.HelmReleases = revisions
	saved, err := e.b.Save(ctx(t), key, snap)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := e.b.Find(ctx(t), key, "uid-1")
	if err != nil || ref == nil {
		t.Fatalf("Find of the run's backup: %v, %v", ref, err)
	}
	if ref.SHA256 != saved.SHA256 || len(ref.Secrets) != 1 || ref.Secrets[0] != saved.Secrets[0] || ref.Objects != 1 || !ref.CreatedAt.Equal(saved.CreatedAt) {
		t.Errorf("Find answered %+v; Save returned %+v", ref, saved)
	}
	// The Helm revisions a rollback returns the releases to come with it,
	// as the record's ref holds them.
	if !reflect.DeepEqual(ref.HelmReleases, revisions) {
		t.Errorf("Find answered Helm revisions %+v; the snapshot was saved with %+v", ref.HelmReleases, revisions)
	}
	if ref, err := e.b.Find(ctx(t), key, "uid-2"); err != nil || ref != nil {
		t.Errorf("Find for another run of the same name: %v, %v; want nothing", ref, err)
	}

	secrets := e.cs.CoreV1().Secrets(e.backupNS)
	sec, err := secrets.Get(ctx(t), saved.Secrets[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sec.Data {
		v[len(v)/2] ^= 0xff
		sec.Data[k] = v
	}
	if _, err := secrets.Update(ctx(t), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.Find(ctx(t), key, "uid-1"); !errors.Is(err, backup.ErrCorrupt) {
		t.Errorf("Find of an altered backup: %v; want ErrCorrupt", err)
	}
}
