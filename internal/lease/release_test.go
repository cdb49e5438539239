package lease

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// leaseUpdates counts the updates of the Lease, once answered.
type leaseUpdates struct{ puts atomic.Int64 }

func (c *leaseUpdates) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if strings.Contains(r.URL.Path, "/leases/") && r.Method == http.MethodPut {
			c.puts.Add(1)
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Release frees a lease nobody else wrote, and leaves one another process
// took meanwhile, unnoticed, theirs.
func TestReleaseSparesATakeover(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		takeOver bool
	}{{"held to the end", false}, {"taken over unnoticed", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			count := &leaseUpdates{}
			cfg := rest.CopyConfig(f.c.RESTConfig())
			cfg.Wrap(count.wrap)
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Renewals far apart: the takeover below happens between two.
			c := Config{Namespace: f.ns, Duration: 30 * time.Second, RenewEvery: 5 * time.Second, Identity: alice()}
			h, err := Acquire(f.ctx, cs, c)
			if err != nil {
				t.Fatal(err)
			}
			// The elector renews once right after the take (which, in a
			// new namespace, creates the Lease): the takeover comes after.
			for deadline := time.Now().Add(5 * time.Second); count.puts.Load() < 1; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the elector did not renew the lease it took within 5s")
				}
			}
			time.Sleep(20 * time.Millisecond) // the answer noted by the lock
			mallory := Identity{User: "mallory", Host: "elsewhere", PID: 7, Run: "other"}
			if tt.takeOver {
				takeOver(t, f, mallory)
			}
			h.Release()
			id, valid := holder(t, f)
			switch {
			case tt.takeOver && (!valid || id != mallory):
				t.Errorf("after our Release Holder = %v (valid %v), want mallory still", id, valid)
			case !tt.takeOver && valid:
				t.Errorf("after Release Holder = %v, still valid", id)
			}
		})
	}
}
