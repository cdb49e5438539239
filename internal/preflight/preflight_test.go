package preflight

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/faults"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// A preflight that cannot look must not pass: a namespace list or get
// that fails (other than forbidden, which the access check reports)
// is a problem of its own, naming the field.
func TestPreflightFailsWhenItCannotReadNamespaces(t *testing.T) {
	c := testenv.Cluster(t)
	var in faults.Injector
	s, err := open(in.Wrap(c.RESTConfig()), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	recreate := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "1.0.0", Stages: []v1alpha1.Stage{{
		Name: "gateways",
		Steps: []v1alpha1.Step{{Name: "recreate", Recreate: &v1alpha1.RecreateStep{
			APIVersion: "apps/v1", Kind: "Deployment", Namespace: "tenant-*", Selector: "app=gw"}}},
	}}}}
	image := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "1.0.0", Stages: []v1alpha1.Stage{{
		Name: "web",
		Steps: []v1alpha1.Step{{Name: "web", Image: &v1alpha1.ImageStep{
			Kind: "Deployment", Namespace: "shop", Name: "web", Images: map[string]string{"app": "example.com/web:2"}}}},
	}}}}
	for _, tt := range []struct {
		name  string
		plan  *v1alpha1.UpgradePlan
		rules []faults.Rule
		field string
	}{
		{"recreate pattern, namespace list fails", recreate,
			[]faults.Rule{{Method: http.MethodGet, PathContains: "/api/v1/namespaces", Status: 500, Message: "etcd is sad"}},
			"spec.stages[0].steps[0].recreate.namespace"},
		{"image step, namespace get fails", image,
			[]faults.Rule{{Method: http.MethodGet, PathContains: "/api/v1/namespaces/shop", Status: 500, Message: "etcd is sad"}},
			"spec.stages[0].steps[0].image.namespace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in.Set(tt.rules...)
			defer in.Set()
			p, err := resolve.FromSources(tt.plan, nil)
			if err != nil {
				t.Fatal(err)
			}
			errs := s.Preflight(ctx, p)
			var found bool
			for _, e := range errs {
				if e.Field == tt.field && strings.Contains(e.Error(), "etcd is sad") {
					found = true
				}
			}
			if !found {
				t.Fatalf("preflight with a failing namespace read: want a problem at %s quoting the cause, got %v", tt.field, errs)
			}
		})
	}
}
