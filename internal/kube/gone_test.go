package kube

import (
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// WaitGone on the run's shared cache, whose events arrive late: it does
// not call an object gone while it is there (the cache's old copy, or one
// being deleted), and ends once it was deleted or replaced by another of
// its name.
func TestWaitGoneEndsOnlyOnceTheObjectIsGone(t *testing.T) {
	t.Parallel()
	e, ctx, _, w := laggingEnv(t)
	cms := e.cs.CoreV1().ConfigMaps(e.ns)

	kept, err := e.a.Apply(ctx, configMap(t, e.ns, "kept", "1"))
	if err != nil {
		t.Fatal(err)
	}
	err = w.WaitGone(ctx, kept, time.Second)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("WaitGone on an object nobody deletes = %v, want a timeout", err)
	}

	deleted, err := e.a.Apply(ctx, configMap(t, e.ns, "deleted", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitGone(ctx, deleted, time.Minute); err != nil {
		t.Fatalf("WaitGone after the delete: %v", err)
	}
	if _, err := cms.Get(ctx, "deleted", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("WaitGone ended while the object was there: get = %v", err)
	}

	// Held by a finalizer, as a foreground delete holds an object until
	// its dependents are gone: being deleted is not gone.
	held := configMap(t, e.ns, "held", "1")
	held.SetFinalizers([]string{"upshift.dev/test-hold"})
	held, err = e.a.Apply(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitGone(ctx, held, time.Second); !errors.Is(err, ErrTimeout) {
		t.Fatalf("WaitGone on an object a finalizer holds = %v, want a timeout", err)
	}
	if _, err := cms.Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitGone(ctx, held, time.Minute); err != nil {
		t.Fatalf("WaitGone once the finalizer was removed: %v", err)
	}

	replaced, err := e.a.Apply(ctx, configMap(t, e.ns, "replaced", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "replaced", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := e.a.Apply(ctx, configMap(t, e.ns, "replaced", "2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WaitGone(ctx, replaced, time.Minute); err != nil {
		t.Fatalf("WaitGone after the object was replaced: %v", err)
	}
	if err := w.WaitGone(ctx, again, time.Second); !errors.Is(err, ErrTimeout) {
		t.Errorf("WaitGone on the replacement = %v, want a timeout: it is there", err)
	}
}
