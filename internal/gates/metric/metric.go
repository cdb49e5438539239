// Package metric is the `metric` gate: a metric measured and judged as an
// app rollout's analysis is (internal/analysis), until its count is
// reached or one of its limits is passed, so a platform's stage can be
// gated on what its users see (an error rate, a latency) and rolled back
// when it breaches. Failed, in error or inconclusive, the metric fails
// the gate: a stage has no person to ask, and a rollback is the safe
// side.
package metric

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis"
	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/step"
)

// Gate measures one metric.
type Gate struct {
	metric   v1alpha1.Metric
	conds    *analysis.Conditions
	provider analysis.Provider
	timeout  time.Duration
}

var _ step.Gate = (*Gate)(nil)

// New checks the metric (analysis.Validate) and builds its provider,
// whose requests keep to policy.
func New(m v1alpha1.Metric, timeout time.Duration, policy egress.Policy) (*Gate, error) {
	path := field.NewPath("metric")
	if errs := analysis.Validate(m, path); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if m.Provider.Job != nil {
		return nil, field.Forbidden(path.Child("provider", "job"), "a plan's metric gate measures with prometheus or web: a Job measurement runs in an AppRollout's namespace, as its ServiceAccount")
	}
	conds, errs := analysis.Compile(m, path)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	p, err := analysis.NewProvider(m, policy)
	if err != nil {
		return nil, err
	}
	return &Gate{metric: m, conds: conds, provider: p, timeout: timeout}, nil
}

// Check takes each measurement when it is due until the metric ends, or
// fails when the next one would be due after the gate's timeout.
func (g *Gate) Check(ctx context.Context) (step.Result, error) {
	start := time.Now()
	deadline := start.Add(g.timeout)
	var res v1alpha1.MetricResult
	for {
		due, more := analysis.Due(g.metric, res, start)
		if !more {
			break
		}
		if due.After(deadline) {
			return step.Failure("metric %s did not end within %s: %d measured (%s)", g.metric.Name, g.timeout, res.Count, lastValues(res)), nil
		}
		select {
		case <-ctx.Done():
			return step.Result{}, fmt.Errorf("metric %s: %w", g.metric.Name, context.Cause(ctx))
		case <-time.After(time.Until(due)):
		}
		m, taken := analysis.Measure(ctx, g.provider, g.conds, time.Now())
		if !taken { // no provider of a gate answers later (New refuses a Job)
			m = analysis.ErrorMeasurement(time.Now(), "the measurement did not end")
		}
		if ctx.Err() != nil {
			return step.Result{}, fmt.Errorf("metric %s: %w", g.metric.Name, context.Cause(ctx))
		}
		analysis.Record(g.metric, &res, m)
	}
	if res.Phase == v1alpha1.AnalysisSuccessful {
		return step.Success("metric %s: %s (%s)", g.metric.Name, res.Message, lastValues(res)), nil
	}
	return step.Failure("metric %s %s: %s (%s)", g.metric.Name, strings.ToLower(string(res.Phase)), res.Message, lastValues(res)), nil
}

// lastValues shows the last few measurements, newest last.
func lastValues(res v1alpha1.MetricResult) string {
	ms := res.Measurements
	if len(ms) > 3 {
		ms = ms[len(ms)-3:]
	}
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		v := m.Value
		if m.Phase == v1alpha1.AnalysisError {
			v = "error: " + m.Message
		}
		parts = append(parts, v)
	}
	if len(parts) == 0 {
		return "no measurement"
	}
	return "last: " + strings.Join(parts, ", ")
}
