// Package http is the `http` gate: GET a URL every interval until it
// answers the expected status, or the gate's time runs out. Each answer is
// remembered, so a gate that does not pass says what the endpoint last
// answered ("last answer: 503 Service Unavailable").
package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"net/url"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/step"
)

const (
	// DefaultInterval is the pause between two requests.
	DefaultInterval = time.Second
	// DefaultExpectStatus is the status that passes.
	DefaultExpectStatus = nethttp.StatusOK
	// requestTimeout bounds one request, so a hung endpoint does not use
	// the whole gate.
	requestTimeout = 10 * time.Second
	// drainLimit is how much of a body is read to reuse the connection.
	drainLimit = 64 << 10
)

// ErrInvalidSpec: the URL is not an absolute http(s) URL.
var ErrInvalidSpec = errors.New("invalid http gate")

// Gate polls one URL.
type Gate struct {
	url      string
	shown    string // url with credentials hidden, for messages
	expect   int
	interval time.Duration
	timeout  time.Duration
	client   *nethttp.Client
}

var _ step.Gate = (*Gate)(nil)

// New checks the spec and applies its defaults. timeout is the gate's;
// the spec's own timeout, if set, wins. Requests keep to policy.
func New(spec v1alpha1.HTTPGate, timeout time.Duration, policy egress.Policy) (*Gate, error) {
	u, err := url.Parse(spec.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: url %q is not an http(s) URL", ErrInvalidSpec, redact.URL(spec.URL))
	}
	if err := policy.Allows(spec.URL); err != nil {
		return nil, fmt.Errorf("%w: url: %v", ErrInvalidSpec, err)
	}
	g := &Gate{url: spec.URL, shown: redact.URL(spec.URL), expect: spec.ExpectStatus, interval: DefaultInterval, timeout: timeout,
		client: policy.Client(requestTimeout)}
	if g.expect == 0 {
		g.expect = DefaultExpectStatus
	}
	if spec.Interval != nil && spec.Interval.Duration > 0 {
		g.interval = spec.Interval.Duration
	}
	if spec.Timeout != nil && spec.Timeout.Duration > 0 {
		g.timeout = spec.Timeout.Duration
	}
	return g, nil
}

// Check polls until the expected status or the timeout.
func (g *Gate) Check(ctx context.Context) (step.Result, error) {
	deadline := time.Now().Add(g.timeout)
	defer g.client.CloseIdleConnections()
	var last string
	for attempt := 1; ; attempt++ {
		status, err := g.get(ctx, deadline)
		switch {
		case ctx.Err() != nil:
			return step.Result{}, fmt.Errorf("http gate %s: %w", g.shown, context.Cause(ctx))
		case err != nil:
			last = redact.URLIn(err.Error(), g.url)
		case status == g.expect:
			return step.Success("GET %s answered %d (attempt %d)", g.shown, status, attempt), nil
		default:
			last = fmt.Sprintf("%d %s", status, nethttp.StatusText(status))
		}
		// The next request needs time of its own: a request sent at the
		// deadline would only report that the deadline passed.
		wait := g.interval
		if time.Until(deadline) <= wait {
			return step.Failure("GET %s did not answer %d within %s (%d attempts); last answer: %s", g.shown, g.expect, g.timeout, attempt, last), nil
		}
		select {
		case <-ctx.Done():
			return step.Result{}, fmt.Errorf("http gate %s: %w", g.shown, context.Cause(ctx))
		case <-time.After(wait):
		}
	}
}

// get makes one request, bounded by the request timeout and the deadline.
func (g *Gate) get(ctx context.Context, deadline time.Time) (int, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	req, err := nethttp.NewRequestWithContext(ctx, nethttp.MethodGet, g.url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	return resp.StatusCode, nil
}
