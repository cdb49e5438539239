package lease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// ErrFenced: a write was refused because this process does not hold the
// lease (any more). A refusal after a loss also wraps ErrLost.
var ErrFenced = errors.New("write refused: this process does not hold the lease")

// errNotTaken is the cause of a refusal before any lease was held.
var errNotTaken = errors.New("no lease was taken")

// Fence lets the writes of clients built from a guarded rest.Config through
// only while a lease is held: from Open until that lease is lost or
// released. Once it closes it refuses every write, and cancels the writes
// in flight.
//
// It lives in the HTTP transport, not in our callers' contexts, because not
// every writer takes our context: Helm's kube client waits, rolls back
// (--atomic), uninstalls and records releases with contexts of its own, and
// an upgrade whose context ended goes on applying in the background. A
// transport every client of the run shares stops them all. It belongs with
// the lease: Held says when we may write, Fence makes the clients obey.
//
// Reads always pass, and so do requests that store nothing: server-side
// dry runs (dryRun=All in the query; preview and preflight send them before
// any lease is taken) and access and token reviews. A dry-run delete that
// carries its options in the body is refused like any delete: the fence
// errs on the side of no write.
type Fence struct {
	mu   sync.Mutex
	held *Held // nil: no lease taken yet
}

// NewFence returns a closed fence: no write passes until Open.
func NewFence() *Fence { return &Fence{} }

// Open lets writes through while h is held. A later Open replaces h.
func (f *Fence) Open(h *Held) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = h
}

// Guard returns a copy of cfg whose clients write only through f.
func (f *Fence) Guard(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &fencedTransport{fence: f, next: rt} })
	return c
}

// admit returns the context of the lease a write may go out under, or the
// error that refuses it.
func (f *Fence) admit(req *http.Request) (context.Context, error) {
	f.mu.Lock()
	h := f.held
	f.mu.Unlock()
	if h == nil {
		return nil, refusal(req, errNotTaken)
	}
	ctx := h.Context()
	if ctx.Err() != nil {
		return nil, refusal(req, context.Cause(ctx))
	}
	return ctx, nil
}

// refusal names the refused request and why; errors.Is(err, ErrFenced),
// and errors.Is(err, ErrLost) after a loss.
func refusal(req *http.Request, cause error) error {
	return fmt.Errorf("%w: %s %s: %w", ErrFenced, req.Method, req.URL.Path, cause)
}

type fencedTransport struct {
	fence *Fence
	next  http.RoundTripper
}

func (t *fencedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !changesState(req) {
		return t.next.RoundTrip(req)
	}
	held, err := t.fence.admit(req)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper closes the body, even when it refuses
		}
		return nil, err
	}
	// The write is cut off when the lease ends before the server answered.
	// Once it answered the write is done: cutting off the reading of the
	// answer would only hide its outcome.
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(held, cancel)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	stop()
	if err != nil {
		cancel()
		if held.Err() != nil && req.Context().Err() == nil {
			return nil, refusal(req, fmt.Errorf("cut off in flight: %w", context.Cause(held)))
		}
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose frees the request's context once its answer was read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// changesState tells the requests the fence guards: every method but the
// safe ones (RFC 9110), except dry runs and reviews, which store nothing.
func changesState(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	if dryRun := req.URL.Query()["dryRun"]; len(dryRun) > 0 {
		all := true
		for _, v := range dryRun {
			all = all && v == "All"
		}
		if all {
			return false
		}
	}
	p := req.URL.Path
	return req.Method != http.MethodPost ||
		!(strings.Contains(p, "/apis/authorization.k8s.io/") || strings.Contains(p, "/apis/authentication.k8s.io/"))
}
