package preflight

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// Where the driver bounds what plans may reach (the controller's
// --gate-hosts), a gate on another host is refused before anything
// changes, naming its field; with no bound, nothing is.
func TestPreflightRefusesGatesOnHostsNotAllowed(t *testing.T) {
	s, err := open(testenv.Cluster(t).RESTConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prom := &v1alpha1.PrometheusMetric{Address: "http://169.254.169.254:9090", Query: "up"}
	p := fromSources(t, &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "1.0.0", Stages: []v1alpha1.Stage{{
		Name:  "web",
		Steps: []v1alpha1.Step{{Name: "pause", Pause: &v1alpha1.PauseStep{Duration: metav1.Duration{Duration: time.Second}}}},
		Gates: []v1alpha1.Gate{
			{HTTP: &v1alpha1.HTTPGate{URL: "http://shop.team-a.svc.cluster.local/healthz"}},
			{Metric: &v1alpha1.Metric{Name: "errors", Provider: v1alpha1.MetricProvider{Prometheus: prom}}},
		},
	}}}}, nil)

	if errs := s.Preflight(ctx, p); len(errs) > 0 {
		t.Fatalf("no bound: %v, want none", errs)
	}
	s.clients.Egress = egress.Policy{Hosts: []string{"*.svc.cluster.local"}}
	errs := s.Preflight(ctx, p)
	if len(errs) != 1 || errs[0].Field != "spec.stages[0].gates[1].metric.provider.prometheus.address" || !strings.Contains(errs[0].Error(), "host 169.254.169.254 is not one") {
		t.Fatalf("bounded to *.svc.cluster.local: %v, want the metric's address refused alone", errs)
	}
}
