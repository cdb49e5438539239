package runner

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runstore"
	"github.com/upshift-dev/upshift/internal/step"
)

// countGets counts the GETs whose path ends with a suffix: those of the
// whole object in n, those of its metadata alone in meta. onMarker, when
// set, runs once before the first request that names "marker".
type countGets struct {
	suffix   string
	n        atomic.Int64
	meta     atomic.Int64
	onMarker func()
	marked   sync.Once
}

func (c *countGets) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		if c.onMarker != nil && strings.Contains(r.URL.String(), "marker") {
			c.marked.Do(c.onMarker)
		}
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, c.suffix) {
			if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata") {
				c.meta.Add(1)
			} else {
				c.n.Add(1)
			}
		}
		return rt.RoundTrip(r)
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The first stage's snapshot, read before the lease while preflight runs,
// is the stage's backup when nobody held the lease since the reads began
// and none of its objects changed since (checked on their metadata under
// the lease); when another process did hold it, or anyone (an
// autoscaler, a GitOps sync) changed an object meanwhile, the backup
// reads them again, and holds them as they were just before the stage.
func TestSnapshotReadBeforeTheLeaseServesOnlyWhenNobodyHeldItSince(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		heldBetween   bool
		writerBetween bool
		// writerInChecks changes the object while the plan's health
		// checks run, after the lease was taken.
		writerInChecks bool
		wantInBackup   string
	}{
		{"nobody held the lease", false, false, false, "1"},
		{"another process held it and changed the object", true, false, false, "between"},
		{"nobody held it, but another writer changed the object", false, true, false, "between"},
		{"another writer changed the object during the health checks", false, false, true, "between"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			gets := &countGets{suffix: "/namespaces/" + f.ns + "/configmaps/settings"}
			cfg := rest.CopyConfig(testenv.Cluster(t).RESTConfig())
			cfg.Wrap(gets.wrap)
			var err error
			if f.s, err = Open(cfg, Options{Namespace: f.runsNS, LeaseDuration: 4 * time.Second, LeaseRenew: time.Second}); err != nil {
				t.Fatal(err)
			}
			if err := f.s.ready(f.ctx); err != nil {
				t.Fatal(err)
			}
			other := func(what func()) { // a process of Upshift that takes the lease and releases it
				h, err := lease.Acquire(f.ctx, f.cs, lease.Config{Namespace: f.runsNS, Identity: lease.CurrentIdentity("other")})
				if err != nil {
					t.Fatal(err)
				}
				what()
				h.Release()
			}
			other(func() {}) // the lease of an earlier run, released
			f.configMap("settings", map[string]string{"level": "1"}, nil)

			p := f.plan("early", "2", "")
			if tt.writerInChecks {
				f.configMap("marker", map[string]string{"k": "v"}, nil)
				p.Plan.Spec.Checks = []v1alpha1.Gate{{Ready: &v1alpha1.ReadyGate{APIVersion: "v1", Kind: "ConfigMap", Namespace: f.ns, Name: "marker"}}}
				gets.onMarker = func() {
					patch := []byte(`{"data":{"level":"between"}}`)
					if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Patch(f.ctx, "settings", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Error(err)
					}
				}
			}
			readAheadMayRead(t, f, p)
			f.s.ReadAhead(f.ctx, p)
			early := f.s.preLease
			<-early.ahead.done
			if early.ahead.snap == nil {
				t.Fatal("nothing was read ahead")
			}
			if tt.heldBetween {
				other(func() {
					patch := []byte(`{"data":{"level":"between"}}`)
					if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Patch(f.ctx, "settings", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Fatal(err)
					}
				})
			}
			if tt.writerBetween {
				patch := []byte(`{"data":{"level":"between"}}`)
				if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Patch(f.ctx, "settings", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			before := gets.n.Load()
			out, err := f.s.Apply(f.ctx, p, false)
			if err != nil || out.Run.Status.Phase != v1alpha1.RunSucceeded {
				t.Fatalf("apply: %v, %+v", err, out)
			}
			snap, err := f.s.Backups().Load(f.ctx, *out.Run.Status.Stages[0].Backup)
			if err != nil {
				t.Fatal(err)
			}
			obj, held := snap.Held(step.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: f.ns, Name: "settings"})
			if !held || obj == nil {
				t.Fatalf("the backup does not hold the ConfigMap: %+v", snap.Entries)
			}
			if got, _, _ := unstructured.NestedString(obj.Object, "data", "level"); got != tt.wantInBackup {
				t.Errorf("the backup holds level %q, want %q (the object just before the stage)", got, tt.wantInBackup)
			}
			// Reads of the object once the apply began: the step's own
			// apply reads nothing; only a backup that read it again does.
			reread := gets.n.Load() - before
			if want := tt.heldBetween || tt.writerBetween || tt.writerInChecks; want != (reread > 0) {
				t.Errorf("the ConfigMap was read %d times during the apply; read again: want %v", reread, want)
			}
			// Claimed, the early read is confirmed on the object's
			// metadata; dropped, it is not.
			if checked := gets.meta.Load(); tt.heldBetween == (checked > 0) {
				t.Errorf("the ConfigMap's metadata was read %d times; want some only when the early read was claimed", checked)
			}
		})
	}
}

// readAheadMayRead waits until what ReadAhead asks before it reads holds:
// the lease is seen released (the earlier holder's release is a write of
// its own, which a loaded API server may answer late) and the run is not
// there. The test is about what the read-ahead does once it reads.
func readAheadMayRead(t *testing.T, f *fixture, p *resolve.Plan) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		obs, err := lease.Observe(f.ctx, f.cs, f.runsNS, lease.DefaultName)
		_, gerr := f.s.store.GetResource(f.ctx, p.Plan.Name)
		if err == nil && obs.Free() && errors.Is(gerr, runstore.ErrNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease is not seen released (%v, free %v) or the run's absence not confirmed (%v)", err, obs.Free(), gerr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
