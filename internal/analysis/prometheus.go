package analysis

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/egress"
)

// defaultQueryTimeout bounds a query whose metric sets no timeout.
const defaultQueryTimeout = 30 * time.Second

// prometheus measures with a PromQL query, through Prometheus' own Go
// client.
type prometheus struct {
	api  promv1.API
	spec v1alpha1.PrometheusMetric
}

func newPrometheus(spec v1alpha1.PrometheusMetric, policy egress.Policy) (*prometheus, error) {
	c, err := api.NewClient(api.Config{Address: spec.Address, RoundTripper: policy.Transport()})
	if err != nil {
		return nil, fmt.Errorf("prometheus address %q: %w", spec.Address, err)
	}
	return &prometheus{api: promv1.NewAPI(c), spec: spec}, nil
}

// Measure asks the query at now (a range query: over the span that ends
// now).
func (p *prometheus) Measure(ctx context.Context, now time.Time) (any, error) {
	timeout := defaultQueryTimeout
	if p.spec.Timeout != nil && p.spec.Timeout.Duration > 0 {
		timeout = p.spec.Timeout.Duration
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var v model.Value
	var err error
	if rq := p.spec.RangeQuery; rq != nil {
		step := rq.Span.Duration / 10
		if rq.Step != nil && rq.Step.Duration > 0 {
			step = rq.Step.Duration
		}
		v, _, err = p.api.QueryRange(ctx, p.spec.Query, promv1.Range{Start: now.Add(-rq.Span.Duration), End: now, Step: max(step, time.Second)})
	} else {
		v, _, err = p.api.Query(ctx, p.spec.Query, now)
	}
	if err != nil {
		return nil, fmt.Errorf("prometheus at %s: %w", p.spec.Address, err)
	}
	return valueOf(v)
}

// valueOf is what the conditions see as result, shaped as Argo Rollouts
// shapes it: a scalar is a number, a vector a list of numbers (one per
// series), a matrix a list of series, each a list of numbers.
func valueOf(v model.Value) (any, error) {
	switch v := v.(type) {
	case *model.Scalar:
		return float64(v.Value), nil
	case model.Vector:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = float64(s.Value)
		}
		return out, nil
	case model.Matrix:
		out := make([]any, len(v))
		for i, series := range v {
			points := make([]any, len(series.Values))
			for j, p := range series.Values {
				points[j] = float64(p.Value)
			}
			out[i] = points
		}
		return out, nil
	case *model.String:
		return v.Value, nil
	}
	return nil, fmt.Errorf("prometheus answered a %s, which no condition can judge", v.Type())
}
