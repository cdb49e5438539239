package analysis

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/egress"
)

// A web provider GETs a URL on 127.0.0.1 and judges the JSON it answers,
// or the value JSONPath selects; an answer that is no JSON, not 2xx or
// lacks the selected value is an error measurement that says why, and a
// token in the URL is never in it.
func TestWebProvider(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stats":
			fmt.Fprint(w, `{"data": {"errorRate": 0.01, "status": "ok", "pods": [{"ready": true}, {"ready": true}]}}`)
		case "/html":
			fmt.Fprint(w, `<html>`)
		default:
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	measure := func(path, jsonPath, success string) v1alpha1.Measurement {
		m := v1alpha1.Metric{Name: "web", SuccessCondition: success,
			Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: srv.URL + path + "?token=s3cr3t", JSONPath: jsonPath}}}
		return measureOnce(t, m)
	}
	for _, tt := range []struct {
		name, path, jsonPath, success string
		want                          v1alpha1.AnalysisPhase
		says                          string
	}{
		{"a number selected", "/stats", "{.data.errorRate}", "result < 0.05", v1alpha1.AnalysisSuccessful, ""},
		{"the whole answer", "/stats", "", "result.data.status == 'ok' && result.data.pods.all(p, p.ready)", v1alpha1.AnalysisSuccessful, ""},
		{"a breach", "/stats", "{.data.errorRate}", "result < 0.001", v1alpha1.AnalysisFailed, ""},
		{"several values selected", "/stats", "{.data.pods[*].ready}", "result.all(r, r)", v1alpha1.AnalysisSuccessful, ""},
		{"nothing selected", "/stats", "{.data.latency}", "result < 1", v1alpha1.AnalysisError, "selects nothing"},
		{"not JSON", "/html", "", "true", v1alpha1.AnalysisError, "no JSON"},
		{"an error status", "/down", "", "true", v1alpha1.AnalysisError, "503"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := measure(tt.path, tt.jsonPath, tt.success)
			if m.Phase != tt.want || !strings.Contains(m.Message, tt.says) {
				t.Errorf("%+v, want %s saying %q", m, tt.want, tt.says)
			}
			if strings.Contains(m.Message, "s3cr3t") {
				t.Errorf("the message shows the URL's token: %s", m.Message)
			}
		})
	}
}

// A provider is refused when two or none are set, or a JSONPath does not
// parse, naming the field.
func TestValidateProviders(t *testing.T) {
	prom := &v1alpha1.PrometheusMetric{Address: "http://p:9090", Query: "up"}
	for _, tt := range []struct {
		name string
		p    v1alpha1.MetricProvider
		want string
	}{
		{"two", v1alpha1.MetricProvider{Prometheus: prom, Web: &v1alpha1.WebMetric{URL: "http://x"}}, "metric.provider: Forbidden: set exactly one provider"},
		{"none", v1alpha1.MetricProvider{}, "metric.provider: Required value"},
		{"a JSONPath that does not parse", v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: "http://x", JSONPath: "{.data["}}, "metric.provider.web.jsonPath: Invalid value"},
		{"a URL without a scheme", v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: "x/health"}}, "metric.provider.web.url: Invalid value"},
	} {
		errs := Validate(v1alpha1.Metric{Name: "m", Provider: tt.p}, field.NewPath("metric"))
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tt.want) {
			t.Errorf("%s: %v, want one error starting %q", tt.name, errs, tt.want)
		}
	}
}

// A provider on a host the policy does not allow is refused when built,
// naming the field; one on a link-local address is refused at the dial.
func TestProvidersKeepToThePolicy(t *testing.T) {
	bounded := egress.Policy{Hosts: []string{"prometheus.monitoring"}}
	web := v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: "http://127.0.0.1:9/stats"}}}
	if _, err := NewProvider(web, bounded); err == nil || !strings.Contains(err.Error(), "provider.web.url: host 127.0.0.1 is not one") {
		t.Errorf("a web provider on a host not allowed: %v, want refused naming provider.web.url", err)
	}
	prom := v1alpha1.Metric{Name: "m", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: "http://169.254.169.254", Query: "up"}}}
	p, err := NewProvider(prom, egress.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Measure(context.Background(), time.Now()); err == nil || !strings.Contains(err.Error(), "link-local") {
		t.Errorf("a Prometheus on the metadata address: %v, want refused as link-local", err)
	}
}

// With statusCode, result is the answer's HTTP status: a health URL
// answering 503 is a failed measurement, not an error; 200 is successful;
// conditions judge the number when given.
func TestWebProviderJudgesTheStatusCode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			fmt.Fprint(w, "ok") // no JSON: the body is not judged
			return
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	measure := func(path, success string) v1alpha1.Measurement {
		m := v1alpha1.Metric{Name: "health", SuccessCondition: success,
			Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: srv.URL + path, StatusCode: true}}}
		return measureOnce(t, m)
	}
	if m := measure("/healthz", ""); m.Phase != v1alpha1.AnalysisSuccessful || m.Value != "200" {
		t.Errorf("200: %+v", m)
	}
	if m := measure("/down", ""); m.Phase != v1alpha1.AnalysisFailed || m.Value != "503" {
		t.Errorf("503: %+v, want a failed measurement of 503", m)
	}
	if m := measure("/down", "result == 503"); m.Phase != v1alpha1.AnalysisSuccessful {
		t.Errorf("503 judged by result == 503: %+v", m)
	}
	bad := v1alpha1.Metric{Name: "health", Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: srv.URL, StatusCode: true, JSONPath: "{.a}"}}}
	if errs := Validate(bad, field.NewPath("metric")); len(errs) != 1 || errs[0].Field != "metric.provider.web.jsonPath" {
		t.Errorf("statusCode with jsonPath: %v", errs)
	}
}

// measureOnce validates and compiles a metric as a gate would, and takes
// one measurement of it now.
func measureOnce(t *testing.T, m v1alpha1.Metric) v1alpha1.Measurement {
	t.Helper()
	if errs := Validate(m, field.NewPath("metric")); len(errs) > 0 {
		t.Fatal(errs)
	}
	c, _ := Compile(m, field.NewPath("metric"))
	p, err := NewProvider(m, egress.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Measure(context.Background(), p, c, time.Now())
	return got
}
