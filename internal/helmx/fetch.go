package helmx

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/source"
)

// fetchTimeout bounds one download when ctx has no sooner deadline: Helm's
// getters take no context, only a timeout.
const fetchTimeout = 2 * time.Minute

// ChartRef says where a chart comes from, as a helm step spells it.
type ChartRef struct {
	// Chart is a local directory or archive, an http(s) archive URL, an
	// oci:// reference, or, with Repo, a chart name.
	Chart string
	// Repo is an HTTP chart repository's URL.
	Repo string
	// Version is the chart version for repositories (empty: the latest)
	// and the tag for oci:// references.
	Version string
	// AllowHTTP lets Chart, Repo and the chart URL a repository's index
	// names be http:// (the plan's spec.allowInsecureHTTP or the
	// driver's --allow-http-sources).
	AllowHTTP bool
}

// String names the chart in messages, without the credentials its URLs
// may carry.
func (r ChartRef) String() string {
	if r.Repo != "" {
		return fmt.Sprintf("%s from %s", r.Chart, redact.URL(r.Repo))
	}
	return redact.Chart(r.Chart)
}

// FetchChart returns the chart as a .tgz archive, whatever its source, so
// a run can save it and any machine can resume with the very same chart.
// A local path is relative to baseDir; a directory is packaged as
// `helm package` would. The archive is loaded once to check it.
func FetchChart(ctx context.Context, ref ChartRef, baseDir string) ([]byte, error) {
	b, err := fetch(ctx, ref, baseDir)
	if err != nil {
		// Helm's getters and repository code quote the URLs they were
		// given (`looks like "https://user:pass@…" is not a valid chart
		// repository`), and the chart URL an index names may carry the
		// repository's credentials too.
		return nil, fmt.Errorf("fetch chart %s: %w", ref, redact.Error(err))
	}
	if _, err := LoadArchive(b); err != nil {
		return nil, fmt.Errorf("fetch chart %s: %w", ref, err)
	}
	return b, nil
}

func fetch(ctx context.Context, ref ChartRef, baseDir string) ([]byte, error) {
	timeout, err := effectiveTimeout(ctx, fetchTimeout)
	if err != nil {
		return nil, err
	}
	switch {
	case ref.Repo != "":
		if err := source.CheckScheme(ref.Repo, ref.AllowHTTP); err != nil {
			return nil, fmt.Errorf("repo: %w", err)
		}
		u, err := repo.FindChartInRepoURL(ref.Repo, ref.Chart, ref.Version, "", "", "", getter.All(cli.New()))
		if err != nil {
			return nil, err
		}
		// The index may name a chart on another host (a release
		// download); over https:// only, unless http:// is allowed.
		return httpGet(ctx, u, timeout, ref.AllowHTTP)
	case strings.HasPrefix(ref.Chart, "oci://"):
		return pullOCI(ref, timeout)
	case strings.HasPrefix(ref.Chart, "https://"), strings.HasPrefix(ref.Chart, "http://"):
		return httpGet(ctx, ref.Chart, timeout, ref.AllowHTTP)
	default:
		return readLocal(ref.Chart, baseDir)
	}
}

// httpGet downloads a chart archive: http:// only when allowHTTP, and
// redirects within its server only (source.CheckRedirect).
func httpGet(ctx context.Context, u string, timeout time.Duration, allowHTTP bool) ([]byte, error) {
	if err := source.CheckScheme(u, allowHTTP); err != nil {
		return nil, err
	}
	client := newHTTPClient(timeout)
	client.CheckRedirect = source.CheckRedirect(allowHTTP)
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("GET %s answered %s", redact.URL(u), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxChartBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: read body: %w", redact.URL(u), err)
	}
	if len(b) > maxChartBytes {
		return nil, fmt.Errorf("GET %s: a chart archive larger than 64 MiB", redact.URL(u))
	}
	return b, nil
}

// maxChartBytes keeps a wrong URL from filling memory.
const maxChartBytes = 64 << 20

// pullOCI pulls ref's chart layer. A registry on the loopback interface is
// spoken to over plain HTTP, as Docker treats localhost registries; any
// other registry needs TLS. Credentials come from Helm's registry config
// (`helm registry login`).
func pullOCI(ref ChartRef, timeout time.Duration) ([]byte, error) {
	opts := []registry.ClientOption{registry.ClientOptHTTPClient(newHTTPClient(timeout))}
	if loopback(strings.TrimPrefix(ref.Chart, "oci://")) {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(ref.Chart, "oci://") + ":" + ref.Version
	res, err := c.Pull(name, registry.PullOptWithChart(true))
	if err != nil {
		return nil, err
	}
	return res.Chart.Data, nil
}

// loopback reports whether an OCI reference's host is this machine.
func loopback(reference string) bool {
	host := reference
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readLocal reads an archive, or packages a chart directory.
func readLocal(p, baseDir string) ([]byte, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(baseDir, p)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return os.ReadFile(p)
	}
	ch, err := Load(p)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "upshift-chart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out, err := chartutil.Save(ch, dir)
	if err != nil {
		return nil, fmt.Errorf("package chart %s: %w", p, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return reproducible(b)
}

// LoadArchive loads a chart from a .tgz archive's bytes, with Load's checks
// (dependencies present, not a library chart).
func LoadArchive(b []byte) (*Chart, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("load chart archive: %w", err)
	}
	if err := checkInstallable(ch); err != nil {
		return nil, fmt.Errorf("load chart %s: %w", ch.Name(), err)
	}
	return ch, nil
}

// newHTTPClient is the registry client's HTTP client: proxies from the
// environment, and a bound on the whole pull.
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
}
