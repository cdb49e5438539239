// Package browsertest runs the web UI's tests in a headless Chromium
// (github.com/chromedp/chromedp): it starts the browser with the flags a
// container needs, records what the page's console reports as an error,
// and checks a page's accessibility basics. The web package's smoke tests
// use it and so do the server's wizard tests against a real server.
//
// Options: Lifetime for a test longer than Timeout, TrustCertificate for
// a server with a self-signed certificate (pinned by its public key).
//
// Chromium is found at $UPSHIFT_CHROMIUM, else as chromium,
// chromium-browser, google-chrome or google-chrome-stable on the PATH.
// Without it New skips the test with SkipMessage, unless
// $UPSHIFT_REQUIRE_CHROMIUM is set (CI sets it after installing it), and
// then it fails.
package browsertest

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// SkipMessage is why a browser test is skipped, and how to run it.
const SkipMessage = "chromium not installed: apt-get install -y chromium"

// Timeout bounds one browser's life in a test (unless Lifetime says
// otherwise): starting Chromium on a loaded machine takes seconds.
const Timeout = 2 * time.Minute

// Option changes how New starts the browser.
type Option func(*config)

type config struct {
	lifetime time.Duration
	flags    []chromedp.ExecAllocatorOption
	err      error
}

// Lifetime bounds the browser's life instead of Timeout: a test that
// follows an upgrade on a real cluster takes minutes.
func Lifetime(d time.Duration) Option {
	return func(c *config) { c.lifetime = d }
}

// TrustCertificate makes the browser accept the certificates of a PEM
// bundle (a server's self-signed one) by pinning their public keys:
// Chromium's --ignore-certificate-errors-spki-list, the base64 SHA-256 of
// each certificate's SubjectPublicKeyInfo, which Chromium honours with a
// --user-data-dir of the test's own (chromedp gives it one). Every other
// certificate is checked as usual, unlike with
// --ignore-certificate-errors.
func TrustCertificate(bundle []byte) Option {
	return func(c *config) {
		pins, err := SPKIPins(bundle)
		if err != nil {
			c.err = err
			return
		}
		c.flags = append(c.flags, chromedp.Flag("ignore-certificate-errors-spki-list", strings.Join(pins, ",")))
	}
}

// SPKIPins are the base64 SHA-256 digests of the SubjectPublicKeyInfo of
// every certificate of a PEM bundle, as Chromium's
// --ignore-certificate-errors-spki-list takes them.
func SPKIPins(bundle []byte) ([]string, error) {
	var pins []string
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("a certificate to trust: %w", err)
		}
		sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
		pins = append(pins, base64.StdEncoding.EncodeToString(sum[:]))
	}
	if len(pins) == 0 {
		return nil, errors.New("a certificate to trust: the PEM bundle holds no certificate")
	}
	return pins, nil
}

// Path is the Chromium binary, or "" when there is none.
func Path() string {
	if p := os.Getenv("UPSHIFT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Require answers the Chromium binary; without one it skips t with
// SkipMessage, or fails it when $UPSHIFT_REQUIRE_CHROMIUM is set. A test
// that starts other things (a cluster, a server) before its browser
// calls it first.
func Require(t testing.TB) string {
	t.Helper()
	bin := Path()
	if bin == "" {
		if os.Getenv("UPSHIFT_REQUIRE_CHROMIUM") != "" {
			t.Fatal("UPSHIFT_REQUIRE_CHROMIUM is set and " + SkipMessage)
		}
		t.Skip("chromium not installed: apt-get install -y chromium (.ci/run installs it and sets UPSHIFT_REQUIRE_CHROMIUM, which fails instead)")
	}
	return bin
}

// Browser is one headless Chromium tab of a test.
type Browser struct {
	// Ctx runs chromedp actions in the tab.
	Ctx context.Context

	mu       sync.Mutex
	problems []string
}

// New starts a headless Chromium for t and closes it when t ends: no
// sandbox (tests run as root in containers, where Chromium's sandbox
// cannot start), no GPU, no /dev/shm (small in containers), a profile
// of its own in a temporary directory that chromedp removes once the
// browser exited. Console
// errors, uncaught exceptions and resources that failed to load are
// recorded: see Problems.
func New(t testing.TB, options ...Option) *Browser {
	t.Helper()
	cfg := config{lifetime: Timeout}
	for _, o := range options {
		o(&cfg)
	}
	if cfg.err != nil {
		t.Fatal(cfg.err)
	}
	bin := Require(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
		// chromedp waits 20 s for Chromium to say where its DevTools
		// listen; a first start on a machine busy with test clusters
		// took longer (CI: "websocket url timeout reached").
		chromedp.WSURLReadTimeout(90*time.Second),
	)
	opts = append(opts, cfg.flags...)
	ctx, cancelTimeout := context.WithTimeout(context.Background(), cfg.lifetime)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx,
		// Events of a newer Chromium than chromedp's protocol tables are
		// logged by chromedp as errors; they are not the page's.
		chromedp.WithErrorf(func(string, ...any) {}),
		chromedp.WithLogf(t.Logf))
	b := &Browser{Ctx: bctx}
	chromedp.ListenTarget(bctx, b.listen)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	return b
}

func (b *Browser) listen(ev any) {
	var p string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.APITypeError && ev.Type != runtime.APITypeAssert {
			return
		}
		var args []string
		for _, a := range ev.Args {
			if a.Description != "" {
				args = append(args, a.Description)
			} else {
				args = append(args, string(a.Value))
			}
		}
		p = "console." + string(ev.Type) + ": " + strings.Join(args, " ")
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		p = "exception: " + d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			p += " " + d.Exception.Description
		}
		if d.URL != "" {
			p += fmt.Sprintf(" (%s:%d)", d.URL, d.LineNumber+1)
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level != log.LevelError {
			return
		}
		p = fmt.Sprintf("log %s: %s", ev.Entry.Source, ev.Entry.Text)
		if ev.Entry.URL != "" {
			p += " (" + ev.Entry.URL + ")"
		}
	default:
		return
	}
	b.mu.Lock()
	b.problems = append(b.problems, p)
	b.mu.Unlock()
}

// Problems are the console errors, uncaught exceptions and failed loads
// (a 404 of a script, a Content-Security-Policy refusal) seen so far.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// CheckNoProblems fails t with every problem seen so far.
func (b *Browser) CheckNoProblems(t testing.TB) {
	t.Helper()
	for _, p := range b.Problems() {
		t.Error(p)
	}
}

// Run runs actions in the tab and fails t on an error.
func (b *Browser) Run(t testing.TB, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(b.Ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// Screenshot saves what the viewport shows as a PNG file.
func (b *Browser) Screenshot(t testing.TB, path string) {
	t.Helper()
	var png []byte
	b.Run(t, chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Eval evaluates a JavaScript expression (a promise is awaited) into out.
func Eval(expr string, out any) chromedp.Action {
	return chromedp.Evaluate(expr, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	})
}

// accessibilityJS lists what keeps the page from being used without a
// mouse or a screen: controls without a label or a name, no language,
// not exactly one h1, no main landmark, images without alt text.
const accessibilityJS = `(() => {
  const out = [];
  const visible = (el) => !el.closest('[hidden]') && el.getClientRects().length > 0;
  const name = (el) => (el.getAttribute('aria-label') || '').trim() ||
    (el.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean)
      .map((id) => document.getElementById(id)?.textContent || '').join(' ').trim();
  if (!document.documentElement.lang) out.push('html has no lang');
  if (document.querySelectorAll('main').length !== 1) out.push('not exactly one main landmark');
  const h1 = [...document.querySelectorAll('h1')].filter(visible);
  if (h1.length !== 1) out.push('visible h1 elements: ' + h1.length);
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (el.type === 'hidden' || !visible(el)) continue;
    if (!(el.labels && el.labels.length) && !name(el)) out.push('no label: ' + el.outerHTML.slice(0, 120));
  }
  for (const el of document.querySelectorAll('button, a[href], [role="button"]')) {
    if (!visible(el)) continue;
    if (!el.textContent.trim() && !name(el)) out.push('no accessible name: ' + el.outerHTML.slice(0, 120));
  }
  for (const el of document.querySelectorAll('[role="progressbar"]')) {
    if (!name(el)) out.push('progressbar without a name');
    if (el.getAttribute('aria-valuenow') === null) out.push('progressbar without aria-valuenow');
  }
  for (const el of document.querySelectorAll('img')) {
    if (!el.hasAttribute('alt')) out.push('img without alt: ' + el.src);
  }
  for (const el of document.querySelectorAll('[onclick], div[tabindex="0"], span[tabindex="0"]')) {
    out.push('a div or span acting as a control: ' + el.outerHTML.slice(0, 120));
  }
  if (!document.querySelector('[aria-live]')) out.push('no aria-live region');
  return out;
})()`

// Accessibility answers the page's accessibility problems (see
// accessibilityJS), none when it passes.
func (b *Browser) Accessibility(t testing.TB) []string {
	t.Helper()
	var out []string
	b.Run(t, Eval(accessibilityJS, &out))
	return out
}
