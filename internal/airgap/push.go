package airgap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is where a bundle is pushed: a host (with its port) and a
// repository prefix ("" for none).
type Registry struct {
	Host, Prefix string
}

// ParseRegistry reads HOST[:PORT][/PREFIX]; flag names the flag it came
// from, for its errors.
func ParseRegistry(s, flag string) (Registry, error) {
	if strings.Contains(s, "://") {
		return Registry{}, fmt.Errorf("%s %q: write it without a scheme, as HOST[:PORT][/PREFIX] (the registry is always spoken to over https)", flag, s)
	}
	host, prefix, _ := strings.Cut(strings.TrimSuffix(s, "/"), "/")
	if host == "" {
		return Registry{}, fmt.Errorf("%s %q: write it as HOST[:PORT][/PREFIX] (registry.example.com:5000/mirror)", flag, s)
	}
	r := Registry{Host: host, Prefix: prefix}
	if _, err := name.NewTag(r.Ref("x/y:z"), name.StrictValidation); err != nil {
		return Registry{}, fmt.Errorf("%s %q: write it as HOST[:PORT][/PREFIX] with a lowercase prefix (registry.example.com:5000/mirror): %v", flag, s, err)
	}
	return r, nil
}

// Ref is where a bundle's repository:tag goes in the registry.
func (r Registry) Ref(ref string) string {
	if r.Prefix == "" {
		return r.Host + "/" + ref
	}
	return r.Host + "/" + r.Prefix + "/" + ref
}

func (r Registry) String() string { return r.Ref("")[:len(r.Ref(""))-1] }

// Options are the remote options to push to r: over https always, even
// to a private or loopback address (go-containerregistry falls back to
// plain http for those when https fails, which would send the
// credentials in the clear), trusting the system's CAs and caFile's ("" for
// none), with the credentials of the Docker config (docker login).
func Options(ctx context.Context, r Registry, caFile string) ([]remote.Option, error) {
	base := remote.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--airgap-registry-ca-file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--airgap-registry-ca-file %s holds no PEM certificate", caFile)
		}
		base.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithTransport(httpsOnly{host: r.Host, next: base})}, nil
}

// httpsOnly sends the registry's requests over https whatever scheme
// go-containerregistry chose, and refuses plain http to any other host (a
// token service a registry's 401 names over http would get the
// credentials in clear).
type httpsOnly struct {
	host string
	next http.RoundTripper
}

func (t httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" {
		if req.URL.Host != t.host {
			return nil, fmt.Errorf("refused plain http to %s: the registry's token service must be https", req.URL.Host)
		}
		req = req.Clone(req.Context())
		req.URL.Scheme = "https"
	}
	return t.next.RoundTrip(req)
}

// Push pushes every manifest of the bundle (with its blobs) to its
// repository:tag in r, in index.json's order, calling pushed after
// each. A push of what the registry has already is a no-op: pushing
// again after a failure or a restart is safe.
func (b *Bundle) Push(r Registry, opts []remote.Option, pushed func(i int, m Manifest)) error {
	root, err := b.layout.ImageIndex()
	if err != nil {
		return err
	}
	for i, m := range b.Manifests {
		ref, err := name.NewTag(r.Ref(m.Ref), name.StrictValidation)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Ref, err)
		}
		if m.Desc.MediaType.IsIndex() {
			ii, err := root.ImageIndex(m.Desc.Digest)
			if err == nil {
				err = remote.WriteIndex(ref, ii, opts...)
			}
			if err != nil {
				return fmt.Errorf("push %s to %s: %w", m.Ref, r, err)
			}
		} else {
			img, err := root.Image(m.Desc.Digest)
			if err == nil {
				err = remote.Write(ref, img, opts...)
			}
			if err != nil {
				return fmt.Errorf("push %s to %s: %w", m.Ref, r, err)
			}
		}
		pushed(i, m)
	}
	return nil
}
