package preflight

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/preflight/crdfixture"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// Preflight asks about each namespace the plan names once: when a
// recreate step's pattern has every namespace listed, that list answers
// for the named ones too, a missing one included; otherwise each is
// asked once, however many steps name it.
func TestPreflightAsksEachNamespaceOnce(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(c.RESTConfig())
	for _, ns := range []string{"ns-once-shop", "ns-once-tenant-a"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	}
	var gets, lists atomic.Int64
	cfg := rest.CopyConfig(c.RESTConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet {
				switch p := r.URL.Path; {
				case p == "/api/v1/namespaces":
					lists.Add(1)
				case strings.HasPrefix(p, "/api/v1/namespaces/") && strings.Count(p, "/") == 4:
					gets.Add(1)
				}
			}
			return rt.RoundTrip(r)
		})
	})
	s, err := open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns-once-shop}\n" +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: ns-once-shop}\n" +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns-once-nowhere}\n"
	manifests := v1alpha1.Step{Name: "settings", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: docs}}}
	recreate := v1alpha1.Step{Name: "gateways", Recreate: &v1alpha1.RecreateStep{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns-once-tenant-*", Selector: "app=gw"}}
	plan := func(steps ...v1alpha1.Step) *resolve.Plan {
		return fromSources(t, &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "1.0.0", Stages: []v1alpha1.Stage{{Name: "s", Steps: steps}}}},
			map[string][]byte{"spec.stages[0].steps[0].manifests": []byte(docs)})
	}
	path := "spec.stages[0].steps[0].manifests.namespace"

	for _, tt := range []struct {
		name        string
		plan        *resolve.Plan
		gets, lists int64
	}{
		// the shop, the missing one and the runs' namespace
		{"named only", plan(manifests), 3, 0},
		{"with a pattern", plan(manifests, recreate), 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gets.Store(0)
			lists.Store(0)
			errs := s.Preflight(ctx, tt.plan)
			if crdfixture.ProblemAt(errs, path, "ns-once-nowhere", "create the namespace first") == nil {
				t.Errorf("want the missing namespace named at %s; got %v", path, errs)
			}
			for _, e := range errs {
				if strings.Contains(e.Error(), "ns-once-shop") {
					t.Errorf("a namespace that is there reported: %s", e)
				}
			}
			if g, l := gets.Load(), lists.Load(); g != tt.gets || l != tt.lists {
				t.Errorf("preflight asked for a namespace %d times and listed them %d times; want %d and %d", g, l, tt.gets, tt.lists)
			}
		})
	}
}
