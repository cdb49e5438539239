package runner

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/preflight/crdfixture"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// Preflight judges the plan's CRDs from the first stage's snapshot when
// that was read ahead beside it (Session.ReadAhead): each CRD is read
// once, and a CRD that drops a stored version is refused as when
// preflight reads it itself.
func TestPreflightReadsTheCRDsTheSnapshotReadAheadHolds(t *testing.T) {
	group := "ahead.removals.upshift.test"
	f := crdfixture.New(t, group, 2)
	drop := crdfixture.CRD(group, "v1*")
	p := fromSources(t, crdsPlan(drop), map[string][]byte{"spec.stages[0].steps[0].crds": []byte(drop)})

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
	if problemAt(errs, "spec.stages[0].steps[0].crds", "gadgets."+group, "lists v1alpha1", "2 gadgets."+group+" exist") == nil {
		t.Fatalf("want the dropped stored version refused as without the read-ahead; got %v", errs)
	}
	if s.preLease.snapshot(f.Ctx, p) == nil {
		t.Fatal("nothing was read ahead")
	}
	if n := gets.n.Load(); n != 1 {
		t.Errorf("the CRD was read %d times by the read-ahead and preflight, want once", n)
	}
}

func crdsPlan(doc string) *v1alpha1.UpgradePlan {
	return &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "2.0.0", Stages: []v1alpha1.Stage{{
		Name:  "crds",
		Steps: []v1alpha1.Step{{Name: "crds", CRDs: &v1alpha1.CRDsStep{Source: v1alpha1.Source{Inline: doc}}}},
	}}}}
}

func fromSources(t *testing.T, p *v1alpha1.UpgradePlan, sources map[string][]byte) *resolve.Plan {
	t.Helper()
	r, err := resolve.FromSources(p, sources)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// problemAt is the first problem at the field path whose message has
// every want, or nil.
func problemAt(errs field.ErrorList, path string, wants ...string) *field.Error {
	for _, e := range errs {
		if e.Field != path {
			continue
		}
		ok := true
		for _, w := range wants {
			ok = ok && strings.Contains(e.Error(), w)
		}
		if ok {
			return e
		}
	}
	return nil
}
