package lease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Losing the right to renew (RBAC revoked) ends the lease before it could
// expire for others: Lost closes, Context is cancelled with ErrLost.
func TestLostWhenCredentialsRevoked(t *testing.T) {
	t.Parallel()
	f := setup(t)
	user := "lease-holder-" + f.ns
	grant(t, f, "lease", user, holdLease)
	_, ucs := userClient(t, f, user)
	h, err := Acquire(f.ctx, ucs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	time.Sleep(2 * testRenew)
	if closed(h.Lost()) {
		t.Fatal("lost while renewing fine")
	}

	if err := f.cs.RbacV1().RoleBindings(f.ns).Delete(f.ctx, "lease", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	select {
	case <-h.Lost():
	case <-time.After(testDuration + 2*testRenew):
		t.Fatalf("Lost not closed %s after the credentials were revoked", time.Since(revoked))
	}
	if d := time.Since(revoked); d >= testDuration {
		t.Errorf("lost after %s: not before the lease expired (%s)", d, testDuration)
	}
	cause := context.Cause(h.Context())
	if h.Context().Err() == nil || !errors.Is(cause, ErrLost) {
		t.Fatalf("Context after loss: err %v, cause %v", h.Context().Err(), cause)
	}
	if !strings.Contains(cause.Error(), "forbidden") {
		t.Errorf("cause %q does not say why", cause)
	}
	start := time.Now()
	h.Release()
	if d := time.Since(start); d > testDuration {
		t.Errorf("Release after loss took %s", d)
	}
}

// Another process writing itself into the Lease ends ours at once, and
// our Release does not clear its record.
func TestLostWhenLeaseTakenOver(t *testing.T) {
	t.Parallel()
	f := setup(t)
	h, err := Acquire(f.ctx, f.cs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()

	mallory := Identity{User: "mallory", Host: "elsewhere", PID: 7, Run: "other"}
	takeOver(t, f, mallory)
	stolen := time.Now()
	select {
	case <-h.Lost():
	case <-time.After(testDuration):
		t.Fatalf("Lost not closed %s after the lease was taken over", time.Since(stolen))
	}
	if d := time.Since(stolen); d > 3*testRenew {
		t.Errorf("noticed the takeover after %s, want within a renewal or two", d)
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, ErrLost) || !strings.Contains(cause.Error(), mallory.String()) {
		t.Errorf("cause %v does not name %s", cause, mallory)
	}
	h.Release()
	if id, valid := holder(t, f); !valid || id != mallory {
		t.Fatalf("after our Release Holder = %v (valid %v), want mallory still", id, valid)
	}
}
