package runner

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/preflight/crdfixture"
)

// Preflight judges the plan's CRDs from the first stage's snapshot when
// that was read ahead beside it (Session.ReadAhead): each CRD is read
// once, and a CRD that drops a stored version is refused as when
// preflight reads it itself.
func TestPreflightReadsTheCRDsTheSnapshotReadAheadHolds(t *testing.T) {
	group := "ahead.removals.upshift.test"
	f := crdfixture.New(t, group, 2)
	drop := crdfixture.CRD(group, "v1*")
	p := crdfixture.Plan(t, drop)

	gets := &countGets{suffix: "/customresourcedefinitions/gadgets." + group}
	cfg := rest.CopyConfig(testenv.Cluster(t).RESTConfig())
	cfg.Wrap(gets.wrap)
	s, err := Open(cfg, Options{Namespace: "ahead-" + rand.String(5), LeaseDuration: 4 * time.Second, LeaseRenew: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ready(f.Ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(testenv.Cluster(t).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	// An earlier run's lease, released: the reads ahead may begin.
	h, err := lease.Acquire(f.Ctx, cs, lease.Config{Namespace: s.opts.Namespace, Identity: lease.CurrentIdentity("earlier")})
	if err != nil {
		t.Fatal(err)
	}
	h.Release()

	s.ReadAhead(f.Ctx, p)
	errs := s.Preflight(f.Ctx, p)
	if crdfixture.ProblemAt(errs, "spec.stages[0].steps[0].crds", "gadgets."+group, "lists v1alpha1", "2 gadgets."+group+" exist") == nil {
		t.Fatalf("want the dropped stored version refused as without the read-ahead; got %v", errs)
	}
	if s.preLease.snapshot(f.Ctx, p) == nil {
		t.Fatal("nothing was read ahead")
	}
	if n := gets.n.Load(); n != 1 {
		t.Errorf("the CRD was read %d times by the read-ahead and preflight, want once", n)
	}
}
