package runstore

import (
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestDelete(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	for _, n := range []string{"keep", "drop"} {
		if err := s.Save(ctx, newRun(n, "1.0.0", time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	ref, err := s.SaveSources(ctx, "drop", v1alpha1.UpgradePlanSpec{Version: "1.0.0"}, map[string][]byte{"a": []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "drop"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(s.Namespace()).Get(ctx, ref.Secrets[0], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the sources of a deleted run are still there: %v", err)
	}
	if _, err := s.Get(ctx, "drop"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
	}
	if _, err := s.LoadSources(ctx, "drop"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LoadSources after Delete = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "drop"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete = %v, want ErrNotFound", err)
	}
	runs, err := s.List(ctx)
	if err != nil || len(runs) != 1 || runs[0].Name != "keep" {
		t.Fatalf("List after Delete = %v, %v; want only keep", runs, err)
	}
	// A record of an earlier version is deleted too.
	writeLegacy(t, ctx, cs, s.Namespace(), newRun("old", "0.9.0", time.Now()))
	if err := s.Delete(ctx, "old"); err != nil {
		t.Fatalf("Delete of a record of an earlier version: %v", err)
	}
	if _, err := s.Get(ctx, "old"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete of a record of an earlier version = %v, want ErrNotFound", err)
	}
	// The name is free again.
	if err := s.Save(ctx, newRun("drop", "2.0.0", time.Now())); err != nil {
		t.Fatalf("create after Delete: %v", err)
	}
}
