package runstore

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// On a cluster without the UpgradeRun CRD, reads say there is no run (no
// raw 404) and a save names the fix; EnsureCRD installs it once and says
// so, and then runs are saved.
func TestWithoutTheCRD(t *testing.T) {
	t.Parallel()
	testenv.SkipIfShort(t)
	c, err := testenv.StartTied(localcluster.Options{Name: "runstore-nocrd"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := mustNew(t, c.RESTConfig(), "upshift-system")
	if err := s.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "demo"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get without the CRD = %v, want ErrNotFound", err)
	}
	if runs, err := s.List(ctx); err != nil || len(runs) != 0 {
		t.Errorf("List without the CRD = %v, %v; want no runs", runs, err)
	}
	err = s.Save(ctx, newRun("demo", "1.0.0", time.Now()))
	if err == nil || !strings.Contains(err.Error(), "upshift crds | kubectl apply -f -") || !strings.Contains(err.Error(), "upgraderuns.upshift.dev") {
		t.Errorf("Save without the CRD = %v; want the CRD and the fix named", err)
	}
	// CheckCRD only reads: the CRD is still to be installed after it.
	s.CheckCRD(ctx)
	msg, err := s.EnsureCRD(ctx)
	if err != nil || msg != "installed CRD upgraderuns.upshift.dev" {
		t.Fatalf("EnsureCRD after CheckCRD = %q, %v; want it installed then", msg, err)
	}
	if msg, err := s.EnsureCRD(ctx); err != nil || msg != "" {
		t.Errorf("second EnsureCRD = %q, %v; want nothing done", msg, err)
	}
	if msg, err := mustNew(t, c.RESTConfig(), "upshift-system").EnsureCRD(ctx); err != nil || msg != "" {
		t.Errorf("EnsureCRD of another Store = %q, %v; want the CRD found current", msg, err)
	}
	// A Store that checked the CRD while it waited on other reads asks
	// nothing more when it ensures it.
	var crdGets atomic.Int64
	cfg := rest.CopyConfig(c.RESTConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.URL.Path, "/customresourcedefinitions/upgraderuns.upshift.dev") {
				crdGets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	checked := mustNew(t, cfg, "upshift-system")
	checked.CheckCRD(ctx)
	if msg, err := checked.EnsureCRD(ctx); err != nil || msg != "" || crdGets.Load() != 1 {
		t.Errorf("EnsureCRD after CheckCRD = %q, %v, asking for the CRD %d times in all; want nothing done, asked once", msg, err, crdGets.Load())
	}
	if err := s.Save(ctx, newRun("demo", "1.0.0", time.Now())); err != nil {
		t.Fatalf("Save after EnsureCRD: %v", err)
	}
}

// A run whose resource was created but whose status was not written yet
// (the process stopped between the two writes) reads as Pending, not
// started; its next save writes the whole status.
func TestCreatedWithoutStatusReadsPending(t *testing.T) {
	t.Parallel()
	s, _, ctx := newStore(t)
	dyn, err := dynamic.NewForConfig(testenv.Cluster(t).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	run := newRun("half", "1.0.0", time.Now())
	obj, err := toUnstructured(resourceFor(run, s.Namespace()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(runsGVR).Namespace(s.Namespace()).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "half")
	if err != nil || got.Status.Phase != v1alpha1.RunPending || got.Status.Attempt != 0 || len(got.Status.Stages) != 0 {
		t.Fatalf("Get of a run without status = %+v, %v; want Pending, not started", got, err)
	}
	runs, err := s.List(ctx)
	if err != nil || len(runs) != 1 || runs[0].Status.Phase != v1alpha1.RunPending {
		t.Fatalf("List = %+v, %v", runs, err)
	}
	got.Status = run.Status
	if err := s.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	again, err := s.Get(ctx, "half")
	if err != nil || content(t, again) != content(t, got) {
		t.Fatalf("Get after the first status write = %s, %v; want %s", content(t, again), err, content(t, got))
	}
}

func toUnstructured(run *v1alpha1.UpgradeRun) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(run)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(raw)
}
