package analysis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clip"
	"github.com/upshift-dev/upshift/internal/redact"
)

// Provider measures a metric: the value its conditions judge.
type Provider interface {
	Measure(ctx context.Context, now time.Time) (any, error)
}

// NewProvider builds the metric's provider.
func NewProvider(m v1alpha1.Metric) (Provider, error) {
	switch {
	case m.Provider.Prometheus != nil:
		return newPrometheus(*m.Provider.Prometheus)
	case m.Provider.Web != nil:
		return newWeb(*m.Provider.Web)
	}
	return nil, fmt.Errorf("metric %s: no provider: set provider.prometheus or provider.web", m.Name)
}

// Measure takes one measurement at now: the provider's value judged by
// the conditions, or an Error measurement that says why none was taken.
// Messages leave without credentials (redact.Text): they are kept in
// status.
func Measure(ctx context.Context, p Provider, c *Conditions, now time.Time) v1alpha1.Measurement {
	m := v1alpha1.Measurement{TakenAt: metav1.NewTime(now)}
	value, err := p.Measure(ctx, now)
	if err != nil {
		m.Phase, m.Message = v1alpha1.AnalysisError, clip.Bytes(redact.Text(err.Error()), 1024)
		return m
	}
	m.Value = clip.Bytes(show(value), 256)
	m.Phase, m.Message = c.Judge(value)
	m.Message = clip.Bytes(redact.Text(m.Message), 1024)
	return m
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
