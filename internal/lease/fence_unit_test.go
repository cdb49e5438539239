package lease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// recorder is an API server stand-in on 127.0.0.1 that records what
// reached it. A request to /slow is held until its client goes away.
type recorder struct {
	mu       sync.Mutex
	received []string
	// slowGone is closed when a held /slow request saw its client go away.
	slowIn, slowGone chan struct{}
}

func newRecorder(t *testing.T) (*recorder, *httptest.Server) {
	r := &recorder{slowIn: make(chan struct{}, 1), slowGone: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.received = append(r.received, req.Method+" "+req.URL.RequestURI())
		r.mu.Unlock()
		if req.URL.Path == "/slow" {
			r.slowIn <- struct{}{}
			select {
			case <-req.Context().Done():
				r.slowGone <- struct{}{}
			case <-time.After(10 * time.Second):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.received...)
}

// guardedClient is an http.Client built the way client-go builds one
// from a guarded rest.Config.
func guardedClient(t *testing.T, f *Fence, url string) *http.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(f.Guard(&rest.Config{Host: url}))
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

func send(hc *http.Client, url, method, path string) error {
	req, err := http.NewRequest(method, url+path, strings.NewReader(`{"kind":"ConfigMap"}`))
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// testHeld is a lease as Acquire returns it, without a cluster behind it.
func testHeld() *Held {
	return newHeld(context.Background(), Config{Namespace: "ns", Name: DefaultName}, nil)
}

// What passes a closed fence and what does not: reads, dry runs and
// reviews store nothing and pass; every other request is refused before
// it leaves the process.
func TestFenceRefusesWritesWithoutALease(t *testing.T) {
	rec, srv := newRecorder(t)
	f := NewFence()
	hc := guardedClient(t, f, srv.URL)
	passes := []struct{ method, path string }{
		{http.MethodGet, "/api/v1/namespaces/ns/configmaps/a"},
		{http.MethodGet, "/api/v1/namespaces/ns/configmaps?watch=true"},
		{http.MethodHead, "/version"},
		{http.MethodPatch, "/apis/apps/v1/namespaces/ns/deployments/web?dryRun=All&fieldManager=upshift"},
		{http.MethodPost, "/api/v1/namespaces/ns/configmaps?dryRun=All"},
		{http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"},
		{http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews"},
	}
	refused := []struct{ method, path string }{
		{http.MethodPost, "/api/v1/namespaces/ns/configmaps"},
		{http.MethodPut, "/api/v1/namespaces/ns/configmaps/a"},
		{http.MethodPatch, "/apis/apps/v1/namespaces/ns/deployments/web?fieldManager=upshift"},
		{http.MethodPatch, "/apis/apps/v1/namespaces/ns/deployments/web?dryRun=All&dryRun=Other"},
		{http.MethodDelete, "/api/v1/namespaces/ns/secrets/a"},
		{http.MethodDelete, "/api/v1/namespaces/ns/secrets"},
		{http.MethodPut, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/x"},
	}
	for _, r := range passes {
		if err := send(hc, srv.URL, r.method, r.path); err != nil {
			t.Errorf("%s %s through a closed fence: %v, want it to pass", r.method, r.path, err)
		}
	}
	for _, r := range refused {
		err := send(hc, srv.URL, r.method, r.path)
		if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), "no lease was taken") {
			t.Errorf("%s %s through a closed fence: %v, want it refused for want of a lease", r.method, r.path, err)
		}
	}
	if got := rec.got(); len(got) != len(passes) {
		t.Errorf("the server received %d request(s), want only the %d that pass:\n%s", len(got), len(passes), strings.Join(got, "\n"))
	}
}

// An open fence passes writes while the lease is held and refuses them,
// naming the loss, from the moment it is lost; after a release too.
func TestFenceClosesWithTheLease(t *testing.T) {
	rec, srv := newRecorder(t)
	f := NewFence()
	hc := guardedClient(t, f, srv.URL)
	h := testHeld()
	f.Open(h)
	if err := send(hc, srv.URL, http.MethodPost, "/api/v1/namespaces/ns/configmaps"); err != nil {
		t.Fatalf("write while the lease is held: %v", err)
	}
	h.markLost(fmt.Errorf("%w: lease ns/upshift taken over by mallory", ErrLost))
	err := send(hc, srv.URL, http.MethodPatch, "/api/v1/namespaces/ns/configmaps/a")
	if !errors.Is(err, ErrFenced) || !errors.Is(err, ErrLost) {
		t.Fatalf("write after the loss: %v, want ErrFenced and ErrLost", err)
	}
	for _, want := range []string{"PATCH /api/v1/namespaces/ns/configmaps/a", "taken over by mallory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if got := rec.got(); len(got) != 1 {
		t.Errorf("the server received %v, want only the write made under the lease", got)
	}
	if err := send(hc, srv.URL, http.MethodGet, "/api/v1/namespaces/ns/configmaps/a"); err != nil {
		t.Errorf("read after the loss: %v", err)
	}

	released := testHeld()
	f.Open(released)
	released.cancel(errReleased)
	if err := send(hc, srv.URL, http.MethodDelete, "/api/v1/namespaces/ns/configmaps/a"); !errors.Is(err, ErrFenced) || errors.Is(err, ErrLost) {
		t.Errorf("write after a release: %v, want ErrFenced (not a loss)", err)
	}
}

// A write in flight when the lease is lost is cut off: the client gets the
// refusal at once, and the server sees the request go away.
func TestFenceCutsOffWritesInFlight(t *testing.T) {
	rec, srv := newRecorder(t)
	f := NewFence()
	hc := guardedClient(t, f, srv.URL)
	h := testHeld()
	f.Open(h)
	done := make(chan error, 1)
	go func() { done <- send(hc, srv.URL, http.MethodPut, "/slow") }()
	select {
	case <-rec.slowIn:
	case <-time.After(5 * time.Second):
		t.Fatal("the write did not reach the server")
	}
	lost := time.Now()
	h.markLost(fmt.Errorf("%w: renewal failed", ErrLost))
	select {
	case err := <-done:
		if !errors.Is(err, ErrFenced) || !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "cut off in flight") {
			t.Fatalf("write in flight at the loss: %v, want it cut off with ErrFenced and ErrLost", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("write in flight still running %s after the loss", time.Since(lost))
	}
	select {
	case <-rec.slowGone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the write cut off")
	}
}

// The caller's own cancellation stays the caller's: it is not reported as
// a lost lease.
func TestFenceKeepsTheCallersCancellation(t *testing.T) {
	rec, srv := newRecorder(t)
	f := NewFence()
	hc := guardedClient(t, f, srv.URL)
	f.Open(testHeld())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/slow", strings.NewReader("{}"))
		_, err := hc.Do(req)
		done <- err
	}()
	<-rec.slowIn
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || errors.Is(err, ErrFenced) {
		t.Fatalf("write cancelled by its caller: %v, want context.Canceled and no fence error", err)
	}
}
