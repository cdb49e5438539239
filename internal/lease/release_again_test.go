package lease

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
)

// conflictOnce is a resource lock (a stand-in for the API server's Lease,
// pure logic) whose first update conflicts, as when a renewal the
// release cancelled lands between the elector's read and its release.
type conflictOnce struct {
	rl.Interface
	holder  string
	updates int
}

func (c *conflictOnce) Identity() string { return "me" }
func (c *conflictOnce) Get(context.Context) (*rl.LeaderElectionRecord, []byte, error) {
	return &rl.LeaderElectionRecord{HolderIdentity: c.holder}, []byte(c.holder), nil
}
func (c *conflictOnce) Update(_ context.Context, rec rl.LeaderElectionRecord) error {
	c.updates++
	if c.updates == 1 {
		return apierrors.NewConflict(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "upshift", nil)
	}
	c.holder = rec.HolderIdentity
	return nil
}

// A release refused for a newer version is read again and done when the
// lease is still ours; one another process holds now is not released.
func TestReleaseIsTriedAgainAfterAConflict(t *testing.T) {
	inner := &conflictOnce{holder: "me"}
	g := newGuardedLock(inner)
	g.holder = "me"
	if err := g.Update(context.Background(), rl.LeaderElectionRecord{}); err != nil || inner.holder != "" || inner.updates != 2 {
		t.Errorf("release after a conflict: %v, holder %q, %d updates; want it released on the second", err, inner.holder, inner.updates)
	}

	inner = &conflictOnce{holder: "someone-else"}
	g = newGuardedLock(inner)
	g.holder = "me"
	if err := g.Update(context.Background(), rl.LeaderElectionRecord{}); err != errNotOurs || inner.holder != "someone-else" {
		t.Errorf("release of a lease taken meanwhile: %v, holder %q; want errNotOurs and the holder kept", err, inner.holder)
	}
}
