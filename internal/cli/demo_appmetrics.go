package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The metrics of the demo's app: an exporter that plays the cart's
// pods, and a Prometheus that scrapes it, as the canary's analysis asks
// Prometheus in a real cluster. The local cluster's pods run nothing
// (kwok marks them Running), so the exporter stands in for what they
// would report: the error ratio of each track, by the version its
// Deployment runs, where v2 is the broken build.

// demoBrokenVersion is the cart's version whose requests fail.
const demoBrokenVersion = "v2"

// demoErrorRatio is what a version's pods report.
func demoErrorRatio(version string) string {
	if version == demoBrokenVersion {
		return "0.35"
	}
	return "0.01"
}

// startDemoExporter serves demo_cart_error_ratio{track, version} on
// 127.0.0.1, each track's version read from its Deployment at each
// scrape (the canary Deployment is <deployment>-canary while a canary
// runs).
func startDemoExporter(cs kubernetes.Interface) (addr string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "# HELP demo_cart_error_ratio Share of the cart's requests that failed, by track (the demo's v2 build fails 35 %).")
		fmt.Fprintln(w, "# TYPE demo_cart_error_ratio gauge")
		for track, name := range map[string]string{"stable": demoAppName, "canary": demoAppName + "-canary"} {
			d, err := cs.AppsV1().Deployments(demoAppNamespace).Get(r.Context(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
				http.Error(w, fmt.Sprintf("read deployment %s: %v", name, err), http.StatusServiceUnavailable)
				return
			}
			image := d.Spec.Template.Spec.Containers[0].Image
			version := image[strings.LastIndex(image, ":")+1:]
			fmt.Fprintf(w, "demo_cart_error_ratio{track=%q,version=%q} %s\n", track, version, demoErrorRatio(version))
		}
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String(), func() { _ = srv.Close() }, nil
}

// demoPrometheus is a Prometheus the demo runs.
type demoPrometheus struct {
	url  string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startDemoPrometheus runs bin scraping target every second, its data
// in dir, listening on 127.0.0.1, and returns once it answers the
// stable track's ratio.
func startDemoPrometheus(ctx context.Context, bin, dir, target string) (*demoPrometheus, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n- job_name: demo-cart\n  static_configs: [{targets: [%q]}]\n", target)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	p := &demoPrometheus{url: "http://" + addr, log: filepath.Join(os.TempDir(), "upshift-demo-prometheus.log"), done: make(chan struct{})}
	logFile, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "prometheus-data"),
		"--web.listen-address="+addr, "--log.level=warn")
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); logFile.Close(); close(p.done) }()
	if err := p.waitScraped(ctx); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// waitScraped waits until Prometheus answers the stable track's ratio.
func (p *demoPrometheus) waitScraped(ctx context.Context) error {
	c, err := api.NewClient(api.Config{Address: p.url})
	if err != nil {
		return err
	}
	q := promv1.NewAPI(c)
	deadline := time.Now().Add(time.Minute)
	for {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		v, _, err := q.Query(qctx, `demo_cart_error_ratio{track="stable"}`, time.Now())
		cancel()
		if vec, ok := v.(model.Vector); err == nil && ok && len(vec) == 1 {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("prometheus stopped (its log: %s)", p.log)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("prometheus at %s did not scrape the demo's exporter within a minute (last: %v; its log: %s)", p.url, err, p.log)
		}
	}
}

func (p *demoPrometheus) stop() {
	_ = p.cmd.Process.Kill()
	<-p.done
}
