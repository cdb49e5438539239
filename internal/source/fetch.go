package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

const (
	// fetchTimeout bounds one download, connection to last byte.
	fetchTimeout = 30 * time.Second
	// maxFetchBytes keeps a wrong URL (an ISO image, an endless stream)
	// from filling memory; real manifest bundles are a few MiB.
	maxFetchBytes = 64 << 20
)

// ErrTooLarge: a URL answered more than maxFetchBytes.
var ErrTooLarge = errors.New("source is larger than 64 MiB")

// fetch GETs src.URL, following redirects within its server only
// (CheckRedirect; allowHTTP: the caller allowed http://). CAFile
// (relative to baseDir) is trusted in addition to the system roots;
// InsecureSkipVerify turns verification off. A status other than 2xx is
// an error naming it.
func fetch(ctx context.Context, src v1alpha1.Source, baseDir string, allowHTTP bool) ([]byte, error) {
	tlsCfg := &tls.Config{InsecureSkipVerify: src.InsecureSkipVerify} //nolint:gosec // the plan asks for it explicitly
	if src.CAFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		pem, err := os.ReadFile(resolve(baseDir, src.CAFile))
		if err != nil {
			return nil, fmt.Errorf("read caFile: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("caFile %s holds no PEM certificate", src.CAFile)
		}
		tlsCfg.RootCAs = pool
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsCfg
	client := &http.Client{Transport: transport, Timeout: fetchTimeout, CheckRedirect: CheckRedirect(allowHTTP)}
	defer client.CloseIdleConnections()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("GET answered %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET: read body: %w", err)
	}
	if len(b) > maxFetchBytes {
		return nil, ErrTooLarge
	}
	return b, nil
}
