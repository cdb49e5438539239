// Package egress bounds the HTTP requests a plan makes itself: its http
// gates and its metrics' providers. A plan is a tenant's input, and in
// the controller its URLs are dialled from the controller's pod: a
// link-local address there is the cloud's metadata service, and which
// other hosts a tenant may reach is the admin's to say (--gate-hosts).
package egress

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Policy is how far a plan's requests may reach.
type Policy struct {
	// Hosts the requests may reach: a host name or IP as the URL writes
	// it, or "*.suffix" for every name under suffix; empty: any host.
	Hosts []string
}

// Allows tells whether a URL's host is one the policy lets a plan reach;
// the error says which hosts are.
func (p Policy) Allows(raw string) error {
	if len(p.Hosts) == 0 {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := strings.ToLower(u.Hostname())
	for _, h := range p.Hosts {
		h = strings.ToLower(h)
		if host == h || strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:]) {
			return nil
		}
	}
	return fmt.Errorf("host %s is not one this process lets a plan reach (%s)", host, strings.Join(p.Hosts, ", "))
}

// Transport is an HTTP transport that keeps to the policy: a request to
// a host it does not allow is refused before anything is sent, and so
// is any connection to a link-local address, whatever name led there
// (through a proxy, $HTTPS_PROXY as ever, that check is the proxy's).
// Every policy shares one pool of connections, as http.DefaultTransport
// does: a transport per gate would leave its idle connections behind.
func (p Policy) Transport() http.RoundTripper {
	return roundTripper{policy: p, next: shared}
}

// shared carries every plan's requests.
var shared = &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second, Control: refuseLinkLocal}).DialContext,
	ForceAttemptHTTP2:     true,
	MaxIdleConns:          100,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   10 * time.Second,
	ExpectContinueTimeout: time.Second,
}

type roundTripper struct {
	policy Policy
	next   http.RoundTripper
}

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := rt.policy.Allows(req.URL.String()); err != nil {
		return nil, err
	}
	return rt.next.RoundTrip(req)
}

// refuseLinkLocal refuses a connection to 169.254.0.0/16 or fe80::/10,
// checked on the address actually dialled, after name resolution.
func refuseLinkLocal(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip != nil && (ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast()) {
		return fmt.Errorf("%s is link-local (where clouds serve their metadata): a plan's requests never go there", host)
	}
	return nil
}

// Client is an HTTP client that keeps to the policy, with a timeout.
func (p Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: p.Transport(), Timeout: timeout}
}
