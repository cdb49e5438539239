package analysis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clip"
	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/redact"
)

// Provider measures a metric: the value its conditions judge.
type Provider interface {
	Measure(ctx context.Context, now time.Time) (any, error)
}

// NewProvider builds the metric's provider, whose requests keep to
// policy (a tenant's metric must not reach what the admin did not allow).
func NewProvider(m v1alpha1.Metric, policy egress.Policy) (Provider, error) {
	if err := allowed(m.Provider, policy); err != nil {
		return nil, fmt.Errorf("metric %s: %w", m.Name, err)
	}
	switch {
	case m.Provider.Prometheus != nil:
		return newPrometheus(*m.Provider.Prometheus, policy)
	case m.Provider.Web != nil:
		return newWeb(*m.Provider.Web, policy)
	case m.Provider.Job != nil:
		// A Job runs in a namespace as someone: NewJob, by the caller
		// that knows them (an AppRollout's reconciler).
		return nil, fmt.Errorf("metric %s: provider.job runs in an AppRollout's namespace only", m.Name)
	}
	return nil, fmt.Errorf("metric %s: no provider: set provider.prometheus, provider.web or provider.job", m.Name)
}

// Measure takes one measurement at now: the provider's value judged by
// the conditions, or an Error measurement that says why none was taken.
// Messages leave without credentials (redact.Text): they are kept in
// status. taken is false while the measurement is under way (a Job runs:
// ErrPending): nothing is to be recorded yet.
func Measure(ctx context.Context, p Provider, c *Conditions, now time.Time) (m v1alpha1.Measurement, taken bool) {
	value, err := p.Measure(ctx, now)
	if errors.Is(err, ErrPending) {
		return v1alpha1.Measurement{}, false
	}
	if err != nil {
		return ErrorMeasurement(now, err.Error()), true
	}
	m = v1alpha1.Measurement{TakenAt: metav1.NewTime(now)}
	m.Value = clip.Bytes(show(value), 256)
	m.Phase, m.Message = c.Judge(value)
	m.Message = clip.Bytes(redact.Text(m.Message), 1024)
	return m, true
}

// ErrorMeasurement is a measurement that could not be taken, saying why
// (without credentials, clipped to what status keeps).
func ErrorMeasurement(now time.Time, why string) v1alpha1.Measurement {
	return v1alpha1.Measurement{TakenAt: metav1.NewTime(now), Phase: v1alpha1.AnalysisError, Message: clip.Bytes(redact.Text(why), 1024)}
}

// show writes a value in short: numbers as %g, lists in brackets.
func show(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', 6, 64)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(v)
}

// allowed tells whether the provider's URL is one policy lets a plan
// reach, naming the field.
func allowed(mp v1alpha1.MetricProvider, policy egress.Policy) error {
	switch {
	case mp.Prometheus != nil:
		if err := policy.Allows(mp.Prometheus.Address); err != nil {
			return fmt.Errorf("provider.prometheus.address: %w", err)
		}
	case mp.Web != nil:
		if err := policy.Allows(mp.Web.URL); err != nil {
			return fmt.Errorf("provider.web.url: %w", err)
		}
	}
	return nil
}
