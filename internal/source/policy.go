package source

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/upshift-dev/upshift/internal/redact"
)

// ErrPlainHTTP: a plain http:// URL that neither the plan nor the
// operator allowed.
var ErrPlainHTTP = errors.New("http:// is refused: use an https:// URL, or set spec.allowInsecureHTTP: true in the plan (or start upshift with --allow-http-sources)")

// ErrRedirect: a redirect that leaves the host the plan names, or
// https://.
var ErrRedirect = errors.New("redirect refused")

// CheckScheme refuses a plain http:// URL unless allowHTTP. Other
// schemes are the callers' to check.
func CheckScheme(rawURL string, allowHTTP bool) error {
	if !allowHTTP && strings.HasPrefix(strings.ToLower(rawURL), "http://") {
		return ErrPlainHTTP
	}
	return nil
}

// CheckRedirect is an http.Client's redirect policy: a source is fetched
// from where the plan says and no further. A redirect is followed only
// to the same host and port (another port is another server, possibly
// another tenant's), and never from https:// to http://; http:// to the
// same host at all only when allowHTTP. The upgrade of http://host to
// https://host (their default ports) is followed.
func CheckRedirect(allowHTTP bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return fmt.Errorf("%w: more than 10 redirects", ErrRedirect)
		}
		from, prev, to := via[0].URL, via[len(via)-1].URL, req.URL
		switch {
		case to.Scheme != "https" && (prev.Scheme == "https" || !allowHTTP):
			return fmt.Errorf("%w: %s redirects to %s, not https://", ErrRedirect, redact.URL(prev.String()), redact.URL(to.String()))
		case !sameServer(from, to):
			return fmt.Errorf("%w: %s redirects to another host, %s: name the URL it redirects to in the plan", ErrRedirect, redact.URL(from.String()), redact.URL(to.String()))
		}
		return nil
	}
}

// sameServer compares host and port (the scheme's default when none),
// taking http://host (80) and https://host (443) as one server.
func sameServer(a, b *url.URL) bool {
	if !strings.EqualFold(a.Hostname(), b.Hostname()) {
		return false
	}
	pa, pb := port(a), port(b)
	return pa == pb || (a.Scheme == "http" && b.Scheme == "https" && pa == "80" && pb == "443")
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}
