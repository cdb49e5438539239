package plan

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A metric gate is refused before anything runs when its conditions are
// not CEL, it has no provider, it never ends, or its measurements cannot
// end within the gate's timeout; each problem names its field.
func TestMetricGateRules(t *testing.T) {
	every := func(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
	prom := v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: "http://prometheus.monitoring:9090", Query: "up"}}
	for _, tc := range []struct {
		name   string
		metric v1alpha1.Metric
		gate   *metav1.Duration
		want   []string
	}{
		{name: "measured once", metric: v1alpha1.Metric{Name: "up", SuccessCondition: "result[0] == 1", Provider: prom}},
		{name: "five times, ten seconds apart", metric: v1alpha1.Metric{Name: "up", Count: int32p(5), Interval: every(10 * time.Second), Provider: prom}},
		{name: "not CEL", metric: v1alpha1.Metric{Name: "up", SuccessCondition: "result[0] ==", Provider: prom},
			want: []string{`g.metric.successCondition: Invalid value: "result[0] ==": not a CEL expression`}},
		{name: "no provider", metric: v1alpha1.Metric{Name: "up"},
			want: []string{"g.metric.provider: Required value: where the metric is measured"}},
		{name: "a bad address", metric: v1alpha1.Metric{Name: "up", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: "prometheus:9090", Query: "up"}}},
			want: []string{`g.metric.provider.prometheus.address: Invalid value: "prometheus:9090": must be the http(s) URL of a Prometheus server`}},
		{name: "a count without an interval", metric: v1alpha1.Metric{Name: "up", Count: int32p(3), Provider: prom},
			want: []string{"g.metric.interval: Required value: a count above 1 needs an interval"}},
		{name: "never ends", metric: v1alpha1.Metric{Name: "up", Interval: every(time.Second), Provider: prom},
			want: []string{"g.metric.count: Required value: a gate's metric must end"}},
		{name: "longer than the default timeout", metric: v1alpha1.Metric{Name: "up", Count: int32p(13), Interval: every(10 * time.Second), Provider: prom},
			want: []string{`g.timeout: Invalid value: "2m0s": the metric's measurements take 2m0s (initialDelay and count-1 intervals), not less than the gate's timeout (the default): set timeout above 2m0s`}},
		{name: "within a longer timeout", metric: v1alpha1.Metric{Name: "up", Count: int32p(13), Interval: every(10 * time.Second), Provider: prom}, gate: every(3 * time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.metric
			errs := validateGate(field.NewPath("g"), v1alpha1.Gate{Timeout: tc.gate, Metric: &m})
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n  %v", len(errs), len(tc.want), errs)
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tc.want[i]) {
					t.Errorf("problem %d:\n  %s\nwant it to start with\n  %s", i, e.Error(), tc.want[i])
				}
			}
		})
	}
}
