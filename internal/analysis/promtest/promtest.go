// Package promtest runs a real Prometheus for tests, on 127.0.0.1,
// scraping an exporter whose one gauge the test sets. The binary is
// Debian's prometheus package (.ci/run installs it); without it a test
// skips, unless UPSHIFT_REQUIRE_PROMETHEUS is set, when it fails.
package promtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Gauge is the exporter's metric: upshift_test_error_ratio{version="v2"}.
const Gauge = `upshift_test_error_ratio{version="v2"}`

// Prometheus is a running Prometheus and the exporter it scrapes.
type Prometheus struct {
	// URL of its HTTP API.
	URL   string
	value atomic.Value // string
}

// Start runs Prometheus scraping an exporter of Gauge at value, every
// second, and returns once it answers that value. Both stop with t.
func Start(t testing.TB, value string) *Prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("UPSHIFT_REQUIRE_PROMETHEUS") != "" {
			t.Fatalf("prometheus is required (UPSHIFT_REQUIRE_PROMETHEUS): %v", err)
		}
		t.Skip("no prometheus binary: apt-get install prometheus (.ci/run installs it)")
	}
	p := &Prometheus{}
	p.value.Store(value)
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE upshift_test_error_ratio gauge\n%s %s\n", Gauge, p.value.Load())
	}))
	t.Cleanup(exporter.Close)
	dir := t.TempDir()
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n- job_name: exporter\n  static_configs: [{targets: [%q]}]\n", strings.TrimPrefix(exporter.URL, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p.URL = "http://" + addr
	p.Set(t, value)
	return p
}

// Set makes the exporter report value and waits until Prometheus answers
// it.
func (p *Prometheus) Set(t testing.TB, value string) {
	t.Helper()
	p.value.Store(value)
	c, err := api.NewClient(api.Config{Address: p.URL})
	if err != nil {
		t.Fatal(err)
	}
	q := promv1.NewAPI(c)
	want, err := strconv.ParseFloat(value, 64)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		v, _, err := q.Query(ctx, Gauge, time.Now())
		cancel()
		if vec, ok := v.(model.Vector); err == nil && ok {
			last = vec.String()
			if len(vec) == 1 && float64(vec[0].Value) == want {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("prometheus at %s never answered %s = %s; last: %s", p.URL, Gauge, value, last)
}

// FreeAddr is a 127.0.0.1 address with a port free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
