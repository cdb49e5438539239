package backup_test

import (
	"testing"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/step"
)

// A backup saved unclaimed (taken before its stage's turn) is no stage's
// backup: Find does not answer it, so a resumed run never adopts it,
// until Claim makes it the stage's. A Save of the key writes over an
// unclaimed one; claiming after that is refused, since the chunk holds
// another snapshot than the one confirmed.
func TestUnclaimedBackupIsFoundOnlyOnceClaimed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createConfigMap(t, "settings", map[string]string{"level": "debug"})
	key := backup.Key{Run: "claim-me", Stage: "config", Attempt: 1}
	take := func() *backup.Snapshot {
		snap, err := e.b.Take(ctx(t), []step.Ref{e.configMapRef("settings")}, backup.Fresh)
		if err != nil {
			t.Fatal(err)
		}
		snap.RunUID = "uid-1"
		return snap
	}

	early, err := e.b.SaveUnclaimed(ctx(t), key, take())
	if err != nil {
		t.Fatal(err)
	}
	if ref, err := e.b.Find(ctx(t), key, "uid-1"); err != nil || ref != nil {
		t.Fatalf("Find of an unclaimed backup: %v, %v; want nothing", ref, err)
	}
	if infos, err := e.b.List(ctx(t)); err != nil || !unclaimedIn(infos, key) {
		t.Errorf("List does not show the backup as unclaimed: %+v, %v", infos, err)
	}
	if err := e.b.Claim(ctx(t), early); err != nil {
		t.Fatalf("Claim: %v", err)
	}
	ref, err := e.b.Find(ctx(t), key, "uid-1")
	if err != nil || ref == nil || ref.SHA256 != early.SHA256 {
		t.Fatalf("Find after Claim: %v, %v; want the claimed backup %s", ref, err, early.SHA256)
	}
	if err := e.b.Claim(ctx(t), early); err != nil {
		t.Errorf("Claim of a claimed backup: %v; want nothing to do", err)
	}

	if _, err := e.b.SaveUnclaimed(ctx(t), key, take()); err == nil {
		t.Errorf("SaveUnclaimed wrote over a claimed backup; want it refused")
	}
	if ref, err := e.b.Find(ctx(t), key, "uid-1"); err != nil || ref == nil || ref.SHA256 != early.SHA256 {
		t.Fatalf("Find after a refused SaveUnclaimed: %v, %v; want the claimed backup still", ref, err)
	}

	// An unclaimed backup of another attempt, written over by that
	// stage's own Save.
	key.Attempt = 2
	e.createConfigMap(t, "more", map[string]string{"x": "y"})
	again, err := e.b.SaveUnclaimed(ctx(t), key, take())
	if err != nil {
		t.Fatal(err)
	}
	snap, err := e.b.Take(ctx(t), []step.Ref{e.configMapRef("settings"), e.configMapRef("more")}, backup.Fresh)
	if err != nil {
		t.Fatal(err)
	}
	snap.RunUID = "uid-1"
	saved, err := e.b.Save(ctx(t), key, snap)
	if err != nil {
		t.Fatal(err)
	}
	if ref, err := e.b.Find(ctx(t), key, "uid-1"); err != nil || ref == nil || ref.SHA256 != saved.SHA256 {
		t.Fatalf("Find after a Save over an unclaimed backup: %v, %v; want the saved one", ref, err)
	}
	if err := e.b.Claim(ctx(t), again); err == nil {
		t.Errorf("Claim of a backup another Save wrote over succeeded; want it refused")
	}
}

func unclaimedIn(infos []backup.Info, key backup.Key) bool {
	for _, i := range infos {
		if i.Key == key {
			return i.Unclaimed
		}
	}
	return false
}
