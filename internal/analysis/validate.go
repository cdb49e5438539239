package analysis

import (
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// Validate checks a metric before anything runs: its conditions compile
// (Compile), it has a provider with a usable address and query, and its
// count and durations make sense. Every error names its field under
// path and how to fix it.
func Validate(m v1alpha1.Metric, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "name the metric, e.g. error-rate"))
	}
	_, cerrs := Compile(m, path)
	errs = append(errs, cerrs...)
	for _, d := range []struct {
		name string
		d    *metav1.Duration
	}{{"interval", m.Interval}, {"initialDelay", m.InitialDelay}} {
		if d.d != nil && d.d.Duration <= 0 {
			errs = append(errs, field.Invalid(path.Child(d.name), d.d.Duration.String(), "must be a positive duration such as 30s"))
		}
	}
	if m.Count != nil && *m.Count > 1 && m.Interval == nil {
		errs = append(errs, field.Required(path.Child("interval"), "a count above 1 needs an interval between the measurements, e.g. 30s"))
	}
	return append(errs, validateProvider(m.Provider, path.Child("provider"))...)
}

// validateProvider checks that exactly one provider is set, with a usable
// address and what it measures.
func validateProvider(mp v1alpha1.MetricProvider, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := 0
	for _, p := range []bool{mp.Prometheus != nil, mp.Web != nil, mp.Job != nil} {
		if p {
			set++
		}
	}
	switch {
	case set > 1:
		return field.ErrorList{field.Forbidden(path, "set exactly one provider: prometheus, web or job")}
	case mp.Job != nil:
		if mp.Job.Image == "" {
			errs = append(errs, field.Required(path.Child("job", "image"), "the image of the Job's container, whose exit code is measured"))
		}
	case mp.Prometheus != nil:
		p, pp := mp.Prometheus, path.Child("prometheus")
		if !httpURL(p.Address) {
			errs = append(errs, field.Invalid(pp.Child("address"), redact.URL(p.Address), "must be the http(s) URL of a Prometheus server, e.g. http://prometheus.monitoring:9090"))
		}
		if p.Query == "" {
			errs = append(errs, field.Required(pp.Child("query"), "a PromQL query, e.g. sum(rate(errors_total[1m]))"))
		}
		if rq := p.RangeQuery; rq != nil && rq.Span.Duration <= 0 {
			errs = append(errs, field.Invalid(pp.Child("rangeQuery", "span"), rq.Span.Duration.String(), "must be a positive duration such as 5m"))
		}
	case mp.Web != nil:
		w, wp := mp.Web, path.Child("web")
		if !httpURL(w.URL) {
			errs = append(errs, field.Invalid(wp.Child("url"), redact.URL(w.URL), "must be an absolute http(s) URL that answers JSON"))
		}
		if w.JSONPath != "" && w.StatusCode {
			errs = append(errs, field.Invalid(wp.Child("jsonPath"), w.JSONPath, "statusCode judges the answer's status, not its body: leave jsonPath out, or statusCode"))
		}
		if w.JSONPath != "" {
			if err := jsonpath.New("metric").Parse(w.JSONPath); err != nil {
				errs = append(errs, field.Invalid(wp.Child("jsonPath"), w.JSONPath, err.Error()+"; write kubectl's JSONPath, e.g. {.data.errorRate}"))
			}
		}
	default:
		errs = append(errs, field.Required(path, "where the metric is measured: prometheus (address and query), web (url) or job (image)"))
	}
	return errs
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Expected is how long a metric that passes takes, from its start to its
// last measurement (its initial delay and count-1 intervals); zero for
// one measured until stopped.
func Expected(m v1alpha1.Metric) time.Duration {
	n := count(m)
	if n == 0 {
		return 0
	}
	var d time.Duration
	if m.InitialDelay != nil {
		d = m.InitialDelay.Duration
	}
	if m.Interval != nil {
		d += time.Duration(n-1) * m.Interval.Duration
	}
	return d
}
