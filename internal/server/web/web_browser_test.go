package web

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

// The browser tests (TestBrowser*) need Chromium; without it they are
// skipped with browsertest.SkipMessage. They serve the embedded UI alone,
// over plain HTTP on 127.0.0.1: no API behind it, so they check what the
// page does before it calls one (the server's tests drive the wizard
// against a real server).

func serveUI(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/", Handler())
	// The modules' tests, imported by the page (same origin, so the
	// Content-Security-Policy allows them).
	mux.Handle("/test/", http.StripPrefix("/test/", http.FileServer(http.Dir("testdata/js"))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Without a session every route shows the login screen: a labelled
// password field with the focus, and no console error or exception
// (a module that fails to load or parse, a refused resource).
func TestBrowserLoginPage(t *testing.T) {
	b := browsertest.New(t)
	srv := serveUI(t)
	for _, p := range []string{"/", "/#/runs", "/runs/demo-1.1.0", "/#/preview"} {
		var page struct {
			Type, Label, Active, Heading, Title, Nav string
			Described                                string
		}
		b.Run(t,
			chromedp.Navigate(srv.URL+p),
			chromedp.WaitVisible(`#login-password`, chromedp.ByQuery),
			browsertest.Eval(`(() => {
			  const el = document.getElementById('login-password');
			  return {
			    Type: el.type,
			    Label: [...el.labels].map((l) => l.textContent).join(' '),
			    Described: document.getElementById(el.getAttribute('aria-describedby'))?.textContent || '',
			    Active: document.activeElement?.id || '',
			    Heading: document.querySelector('h1')?.textContent || '',
			    Title: document.title,
			    Nav: document.getElementById('site-nav').hidden ? 'hidden' : 'shown',
			  };
			})()`, &page))
		if page.Type != "password" || page.Label != "Password" {
			t.Errorf("%s: the password field is %q labelled %q", p, page.Type, page.Label)
		}
		if page.Active != "login-password" {
			t.Errorf("%s: the focus is on %q, not the password field", p, page.Active)
		}
		if page.Heading != "Sign in to Upshift" || !strings.HasPrefix(page.Title, "Sign in") || page.Nav != "hidden" || page.Described == "" {
			t.Errorf("%s: %+v", p, page)
		}
		for _, problem := range b.Accessibility(t) {
			t.Errorf("%s: accessibility: %s", p, problem)
		}
	}
	// An empty password is refused in the page, said next to the field.
	var alert string
	b.Run(t,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(`#login-password`, chromedp.ByQuery),
		chromedp.Click(`[data-testid="login-submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#login-error`, chromedp.ByQuery),
		chromedp.Text(`#login-error`, &alert, chromedp.ByQuery))
	if !strings.Contains(alert, "enter the password") {
		t.Errorf("empty password: %q", alert)
	}
	b.CheckNoProblems(t)
}

// The modules' own tests (testdata/js: the event-stream parser, the
// progress and the actions that apply, the DOM built from hostile text)
// run in the page, which loads every module of the UI.
func TestBrowserModules(t *testing.T) {
	b := browsertest.New(t)
	srv := serveUI(t)
	var res struct {
		Count    int
		Failures []string
	}
	var modules []string
	for _, f := range Files() {
		if strings.HasSuffix(f, ".js") {
			modules = append(modules, AssetPrefix+f)
		}
	}
	var loaded int
	b.Run(t,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(`#login-password`, chromedp.ByQuery),
		browsertest.Eval(`Promise.all(`+jsList(modules)+`.map((m) => import(m))).then((l) => l.length)`, &loaded),
		browsertest.Eval(`import('/test/run.js').then((m) => m.run())`, &res))
	if loaded != len(modules) {
		t.Errorf("loaded %d of %d modules", loaded, len(modules))
	}
	if res.Count < 20 {
		t.Errorf("ran %d tests", res.Count)
	}
	for _, f := range res.Failures {
		t.Error(f)
	}
	b.CheckNoProblems(t)
}

// follow (sse.js) sends the session's token, reads the stream's events,
// and after a break reconnects with Last-Event-ID: a test stream, not the
// API, answers it.
func TestBrowserEventStreamReconnects(t *testing.T) {
	b := browsertest.New(t)
	srv := serveUI(t)
	var mu sync.Mutex
	var seen []string // Authorization and Last-Event-ID of each connection
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := len(seen)
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 0 {
			// The first connection: an event, a keep-alive, then a break.
			fmt.Fprint(w, "retry: 100\nid: 1\nevent: transition\ndata: {\"summary\":\n: keep-alive\ndata: {\"phase\":\"Running\"}}\n\n")
			return
		}
		fmt.Fprint(w, "id: 2\nevent: transition\ndata: {\"summary\":{\"phase\":\"Succeeded\"}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	srv.Config.Handler.(*http.ServeMux).Handle("/test/events", stream)
	var got []string
	b.Run(t,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(`#login-password`, chromedp.ByQuery),
		browsertest.Eval(`(async () => {
		  const { session } = await import('/assets/api.js');
		  const { follow } = await import('/assets/sse.js');
		  session.set({ token: 'tok', role: 'viewer', expiresAt: '2999-01-01T00:00:00Z' });
		  const got = [];
		  await new Promise((resolve) => {
		    const f = follow('/test/events', { onEvent(ev) {
		      got.push(ev.type + ' ' + ev.id + ' ' + JSON.stringify(ev.data));
		      if (got.length === 2) { f.close(); resolve(); }
		    } });
		  });
		  session.clear();
		  return got;
		})()`, &got))
	want := []string{
		`transition 1 {"summary":{"phase":"Running"}}`,
		`transition 2 {"summary":{"phase":"Succeeded"}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 2 || seen[0] != "Bearer tok|" || seen[1] != "Bearer tok|1" {
		t.Errorf("connections (Authorization|Last-Event-ID): %q", seen)
	}
	b.CheckNoProblems(t)
}

func jsList(s []string) string {
	return `['` + strings.Join(s, `','`) + `']`
}

// TrustCertificate trusts the server's certificate by its public key and
// nothing else: a browser given the pin loads the page of a server whose
// certificate no CA signed, one without it refuses the page.
func TestBrowserTrustsPinnedCertificateOnly(t *testing.T) {
	browsertest.Require(t)
	srv := httptest.NewUnstartedServer(Handler())
	// The refused handshake is the point, not news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	pinned := browsertest.New(t, browsertest.TrustCertificate(cert))
	pinned.Run(t, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(`#login-password`, chromedp.ByQuery))
	pinned.CheckNoProblems(t)

	other := browsertest.New(t)
	if err := chromedp.Run(other.Ctx, chromedp.Navigate(srv.URL+"/")); err == nil || !strings.Contains(err.Error(), "CERT") {
		t.Errorf("a browser without the pin loaded the page (error %v)", err)
	}
	if _, err := browsertest.SPKIPins([]byte("no certificate")); err == nil {
		t.Error("SPKIPins of a bundle without a certificate answered no error")
	}
}
