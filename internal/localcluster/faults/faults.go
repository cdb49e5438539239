// Package faults injects API server failures into a client of a real
// local cluster, one kind of request at a time, so a test can show what
// Upshift does when the server answers 500 for one resource, or cannot be
// reached, while every other request goes to the real API server.
package faults

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"k8s.io/client-go/rest"
)

// Rule answers the requests it matches instead of the server.
type Rule struct {
	// Method ("GET", "POST", …; empty for any), PathContains and
	// PathSuffix (either may be empty) select the requests: Method "GET"
	// with PathSuffix "/namespaces/x/secrets" is a list of x's Secrets.
	Method       string
	PathContains string
	PathSuffix   string
	// Status and Message make a Kubernetes Status answer (e.g. 500);
	// Refuse makes the request fail as a refused connection instead.
	Status  int
	Message string
	Refuse  bool
}

// Injector wraps a rest.Config's transport with rules that can change
// while the client is in use.
type Injector struct {
	mu    sync.Mutex
	rules []Rule
	hits  atomic.Int64
}

// Wrap returns a copy of cfg whose requests pass through the injector.
func (in *Injector) Wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper{in: in, next: rt}
	})
	return c
}

// Set replaces the rules.
func (in *Injector) Set(rules ...Rule) {
	in.mu.Lock()
	in.rules = rules
	in.mu.Unlock()
}

// Hits counts the requests a rule answered.
func (in *Injector) Hits() int64 { return in.hits.Load() }

func (in *Injector) match(r *http.Request) (Rule, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, rule := range in.rules {
		if (rule.Method == "" || rule.Method == r.Method) && strings.Contains(r.URL.Path, rule.PathContains) && strings.HasSuffix(r.URL.Path, rule.PathSuffix) {
			return rule, true
		}
	}
	return Rule{}, false
}

type roundTripper struct {
	in   *Injector
	next http.RoundTripper
}

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	rule, ok := t.in.match(r)
	if !ok {
		return t.next.RoundTrip(r)
	}
	t.in.hits.Add(1)
	if r.Body != nil {
		_ = r.Body.Close()
	}
	if rule.Refuse {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":%q,"code":%d}`,
		rule.Message, reason(rule.Status), rule.Status)
	return &http.Response{
		StatusCode: rule.Status,
		Status:     fmt.Sprintf("%d %s", rule.Status, http.StatusText(rule.Status)),
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(bytes.NewBufferString(body)),
		Request:    r,
	}, nil
}

func reason(status int) string {
	switch status {
	case http.StatusInternalServerError:
		return "InternalError"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailable"
	case http.StatusForbidden:
		return "Forbidden"
	case http.StatusTooManyRequests:
		return "TooManyRequests"
	}
	return "Unknown"
}
