package runner

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
)

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The first stage's backup holds its objects as they were just before the
// stage: one that another writer (an autoscaler, a GitOps sync) changed
// while the plan's health checks ran is in the backup as changed.
func TestFirstBackupHoldsWhatTheHealthChecksSaw(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.configMap("settings", map[string]string{"level": "1"}, nil)
	f.configMap("marker", map[string]string{"k": "v"}, nil)
	// The check reads the marker: the other writer writes just then.
	var once sync.Once
	var wrote atomic.Bool
	cfg := rest.CopyConfig(testenv.Cluster(t).RESTConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(r *http.Request) (*http.Response, error) {
			if strings.Contains(r.URL.String(), "marker") {
				once.Do(func() {
					patch := []byte(`{"data":{"level":"between"}}`)
					if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Patch(f.ctx, "settings", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Error(err)
					}
					wrote.Store(true)
				})
			}
			return rt.RoundTrip(r)
		})
	})
	var err error
	if f.s, err = Open(cfg, Options{Namespace: f.runsNS}); err != nil {
		t.Fatal(err)
	}
	p := f.plan("checked", "2", "")
	p.Plan.Spec.Checks = []v1alpha1.Gate{{Ready: &v1alpha1.ReadyGate{APIVersion: "v1", Kind: "ConfigMap", Namespace: f.ns, Name: "marker"}}}

	out, err := f.s.Apply(f.ctx, p, false)
	if err != nil || out.Run.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("apply: %v, %+v", err, out)
	}
	if !wrote.Load() {
		t.Fatal("the health check did not read the marker: nothing was changed during it")
	}
	snap, err := f.s.Backups().Load(f.ctx, *out.Run.Status.Stages[0].Backup)
	if err != nil {
		t.Fatal(err)
	}
	obj, held := snap.Held(step.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: f.ns, Name: "settings"})
	if !held || obj == nil {
		t.Fatalf("the backup does not hold the ConfigMap: %+v", snap.Entries)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "data", "level"); got != "between" {
		t.Errorf("the backup holds level %q, want %q (the object just before the stage)", got, "between")
	}
}
