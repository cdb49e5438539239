package analysis

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis/promtest"
	"github.com/upshift-dev/upshift/internal/egress"
)

// Measurements on a real Prometheus: a good value succeeds, a value that
// breaches the condition fails, a range query judges every point, and a
// query that does not parse or a server that does not answer is an error
// measurement that says why.
func TestMeasureOnARealPrometheus(t *testing.T) {
	prom := promtest.Start(t, "0.01")
	measure := func(spec v1alpha1.PrometheusMetric, success string) v1alpha1.Measurement {
		spec.Timeout = &metav1.Duration{Duration: 5 * time.Second}
		m := v1alpha1.Metric{Name: "errors", SuccessCondition: success, Provider: v1alpha1.MetricProvider{Prometheus: &spec}}
		c, errs := Compile(m, field.NewPath("metrics").Index(0))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		p, err := NewProvider(m, egress.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := Measure(context.Background(), p, c, time.Now())
		return got
	}
	query := v1alpha1.PrometheusMetric{Address: prom.URL, Query: promtest.Gauge}

	if m := measure(query, "result[0] < 0.05"); m.Phase != v1alpha1.AnalysisSuccessful || m.Value != "[0.01]" {
		t.Errorf("at 0.01: %+v, want Successful with value [0.01]", m)
	}
	ranged := query
	ranged.RangeQuery = &v1alpha1.RangeQuery{Span: metav1.Duration{Duration: 5 * time.Second}, Step: &metav1.Duration{Duration: time.Second}}
	if m := measure(ranged, "result[0].all(x, x < 0.05)"); m.Phase != v1alpha1.AnalysisSuccessful || !strings.HasPrefix(m.Value, "[[0.01") {
		t.Errorf("a range query at 0.01: %+v, want Successful over a series of 0.01", m)
	}

	prom.Set(t, "0.5")
	if m := measure(query, "result[0] < 0.05"); m.Phase != v1alpha1.AnalysisFailed || m.Value != "[0.5]" {
		t.Errorf("at 0.5: %+v, want Failed with value [0.5]", m)
	}

	bad := query
	bad.Query = "rate(upshift_test_error_ratio[1m]"
	if m := measure(bad, "result[0] < 0.05"); m.Phase != v1alpha1.AnalysisError || !strings.Contains(m.Message, "parse error") {
		t.Errorf("a query that does not parse: %+v, want an Error saying so", m)
	}
	down := query
	down.Address = "http://" + promtest.FreeAddr(t)
	if m := measure(down, "result[0] < 0.05"); m.Phase != v1alpha1.AnalysisError || !strings.Contains(m.Message, "connection refused") {
		t.Errorf("a server that does not answer: %+v, want an Error saying so", m)
	}
}
