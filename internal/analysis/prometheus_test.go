package analysis

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// exporter serves one gauge whose value the test sets, on 127.0.0.1.
type exporter struct {
	srv   *httptest.Server
	value atomic.Value // string
}

func newExporter(t *testing.T, value string) *exporter {
	e := &exporter{}
	e.value.Store(value)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE upshift_test_error_ratio gauge\nupshift_test_error_ratio{version=\"v2\"} %s\n", e.value.Load())
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// startPrometheus runs a real Prometheus (Debian's package, which .ci/run
// installs) on 127.0.0.1, scraping the exporter every second, and returns
// its address once it has scraped it.
func startPrometheus(t *testing.T, e *exporter) string {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("UPSHIFT_REQUIRE_PROMETHEUS") != "" {
			t.Fatalf("prometheus is required (UPSHIFT_REQUIRE_PROMETHEUS): %v", err)
		}
		t.Skip("no prometheus binary: apt-get install prometheus (.ci/run installs it)")
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n- job_name: exporter\n  static_configs: [{targets: [%q]}]\n", strings.TrimPrefix(e.srv.URL, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "http://" + addr
	waitFor(t, url, "upshift_test_error_ratio", e.value.Load().(string))
	return url
}

// freeAddr is a 127.0.0.1 address with a free port.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitFor waits until the query answers want (Prometheus scraped it).
func waitFor(t *testing.T, url, query, want string) {
	p, err := newPrometheus(v1alpha1.PrometheusMetric{Address: url, Query: query, Timeout: &metav1.Duration{Duration: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	var got any
	for time.Now().Before(deadline) {
		if got, err = p.Measure(context.Background(), time.Now()); err == nil && show(got) == "["+want+"]" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("prometheus at %s never answered %s = %s: last %v, %v", url, query, want, got, err)
}

// Measurements on a real Prometheus: a good value succeeds, a value that
// breaches the condition fails, a range query judges every point, and a
// query that does not parse or a server that does not answer is an error
// measurement that says why.
func TestMeasureOnARealPrometheus(t *testing.T) {
	e := newExporter(t, "0.01")
	url := startPrometheus(t, e)
	measure := func(spec v1alpha1.PrometheusMetric, success string) v1alpha1.Measurement {
		spec.Timeout = &metav1.Duration{Duration: 5 * time.Second}
		m := v1alpha1.Metric{Name: "errors", SuccessCondition: success, Provider: v1alpha1.MetricProvider{Prometheus: &spec}}
		c, errs := Compile(m, field.NewPath("metrics").Index(0))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		p, err := NewProvider(m)
		if err != nil {
			t.Fatal(err)
		}
		return Measure(context.Background(), p, c, time.Now())
	}
	query := v1alpha1.PrometheusMetric{Address: url, Query: `upshift_test_error_ratio{version="v2"}`}

	if m := measure(query, "result[0] < 0.05"); m.Phase != v1alpha1.AnalysisSuccessful || m.Value != "[0.01]" {
		t.Errorf("at 0.01: %+v, want Successful with value [0.01]", m)
	}
	ranged := query
	ranged.RangeQuery = &v1alpha1.RangeQuery{Span: metav1.Duration{Duration: 5 * time.Second}, Step: &metav1.Duration{Duration: time.Second}}
	if m := measure(ranged, "result[0].all(x, x < 0.05)"); m.Phase != v1alpha1.AnalysisSuccessful || !strings.HasPrefix(m.Value, "[[0.01") {
		t.Errorf("a range query at 0.01: %+v, want Successful over a series of 0.01", m)
	}

	e.value.Store("0.5")
	waitFor(t, url, query.Query, "0.5")
	if m := measure(query, "result[0] < 0.05"); m.Phase != v1alpha1.AnalysisFailed || m.Value != "[0.5]" {
		t.Errorf("at 0.5: %+v, want Failed with value [0.5]", m)
	}

	bad := query
	bad.Query = "rate(upshift_test_error_ratio[1m]"
	if m := measure(bad, "result[0] < 0.05"); m.Phase != v1alpha1.AnalysisError || !strings.Contains(m.Message, "parse error") {
		t.Errorf("a query that does not parse: %+v, want an Error saying so", m)
	}
	down := query
	down.Address = "http://" + freeAddr(t)
	if m := measure(down, "result[0] < 0.05"); m.Phase != v1alpha1.AnalysisError || !strings.Contains(m.Message, "connection refused") {
		t.Errorf("a server that does not answer: %+v, want an Error saying so", m)
	}
}
