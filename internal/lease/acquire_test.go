package lease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

func TestAcquireStopsWithContext(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a, err := Acquire(f.ctx, f.cs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	ctx, cancel := context.WithTimeout(f.ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Acquire(ctx, f.cs, f.config(bob()))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with an ending context = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Acquire returned %s after its context ended", d-300*time.Millisecond)
	}
	if id, valid := holder(t, f); !valid || id != alice() {
		t.Fatalf("Holder = %v (valid %v), want alice", id, valid)
	}
	if closed(a.Lost()) || a.Context().Err() != nil {
		t.Fatal("the refused Acquire cost the holder its lease")
	}
}

// The held lease does not end with the context Acquire was given: an
// interrupted command still records where it stopped.
func TestLeaseOutlivesAcquireContext(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx, cancel := context.WithCancel(f.ctx)
	h, err := Acquire(ctx, f.cs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	cancel()
	time.Sleep(testDuration + testRenew)
	if closed(h.Lost()) || h.Context().Err() != nil {
		t.Fatalf("lease ended with Acquire's context: %v", context.Cause(h.Context()))
	}
	if id, valid := holder(t, f); !valid || id != alice() {
		t.Fatalf("Holder = %v (valid %v), want alice", id, valid)
	}
}

// Errors no wait cures come back at once, not after a lease duration.
func TestAcquireFailsFast(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, nobody := userClient(t, f, "nobody-"+f.ns)
	for _, tt := range []struct {
		name string
		cs   kubernetes.Interface
		cfg  Config
		want string
	}{
		{"forbidden", nobody, f.config(alice()), "forbidden"},
		{"no namespace", f.cs, Config{Namespace: "lease-never-created", Duration: testDuration, RenewEvery: testRenew, Identity: alice()}, `namespaces "lease-never-created" not found`},
		{"bad config", f.cs, Config{Namespace: f.ns, Duration: 3 * time.Second, RenewEvery: 2 * time.Second}, "--lease-duration 3s is too short for --lease-renew 2s"},
	} {
		start := time.Now()
		h, err := Acquire(f.ctx, tt.cs, tt.cfg)
		if err == nil {
			h.Release()
			t.Fatalf("%s: Acquire succeeded", tt.name)
		}
		if !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrHeld) {
			t.Errorf("%s: Acquire = %v, want it to contain %q", tt.name, err, tt.want)
		}
		if d := time.Since(start); d > testDuration/2 {
			t.Errorf("%s: Acquire took %s to fail", tt.name, d)
		}
	}
}
