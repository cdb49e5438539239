package metric_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis/promtest"
	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/gates/metric"
	"github.com/upshift-dev/upshift/internal/step"
)

func errorRate(address string, count int32) v1alpha1.Metric {
	return v1alpha1.Metric{
		Name: "error-rate", Count: &count, Interval: &metav1.Duration{Duration: time.Second},
		SuccessCondition: "result[0] < 0.05",
		Provider:         v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: address, Query: promtest.Gauge}},
	}
}

func check(t *testing.T, m v1alpha1.Metric, timeout time.Duration) step.Result {
	t.Helper()
	g, err := metric.New(m, timeout, egress.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// On a real Prometheus, the gate passes while the metric holds, fails
// with the values it saw when it breaches, and fails when its
// measurements cannot end within its timeout.
func TestMetricGate(t *testing.T) {
	prom := promtest.Start(t, "0.01")
	if res := check(t, errorRate(prom.URL, 2), time.Minute); res.Status != step.Succeeded || !strings.Contains(res.Message, "[0.01]") {
		t.Errorf("at 0.01: %+v, want success showing the values", res)
	}
	if res := check(t, errorRate(prom.URL, 10), 3*time.Second); res.Status != step.Failed || !strings.Contains(res.Message, "did not end within 3s") {
		t.Errorf("10 measurements a second apart in 3s: %+v, want a failure saying it did not end", res)
	}
	prom.Set(t, "0.5")
	if res := check(t, errorRate(prom.URL, 2), time.Minute); res.Status != step.Failed || !strings.Contains(res.Message, "failed") || !strings.Contains(res.Message, "[0.5]") {
		t.Errorf("at 0.5: %+v, want a failure showing the value", res)
	}
}

// A metric that does not compile is refused when the gate is built.
func TestNewRefusesABadCondition(t *testing.T) {
	m := errorRate("http://127.0.0.1:9", 1)
	m.SuccessCondition = "result[0] <"
	if _, err := metric.New(m, time.Minute, egress.Policy{}); err == nil || !strings.Contains(err.Error(), "metric.successCondition") {
		t.Errorf("New = %v, want an error naming metric.successCondition", err)
	}
}

// A plan's gate has no namespace or ServiceAccount to run a Job as: a Job
// metric is refused by field, before anything runs.
func TestNewRefusesAJobMetric(t *testing.T) {
	m := v1alpha1.Metric{Name: "smoke", Provider: v1alpha1.MetricProvider{Job: &v1alpha1.JobMetric{Image: "smoke:v1"}}}
	if _, err := metric.New(m, time.Minute, egress.Policy{}); err == nil || !strings.Contains(err.Error(), "metric.provider.job") {
		t.Errorf("a Job metric in a gate: %v", err)
	}
}
