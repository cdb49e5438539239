// Package airgaptest serves a real registry on 127.0.0.1 and writes
// airgap bundles, for the tests of airgap processing.
package airgaptest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	dregistry "github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory" // the test registry keeps blobs in memory
)

// Registry is distribution's registry, in this process, on 127.0.0.1,
// over TLS with a certificate of its own (CAFile trusts it).
type Registry struct {
	Addr, CAFile string
	client       *http.Client
}

// StartRegistry starts a registry that lives as long as the test.
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	pool := writeCert(t, certFile, keyFile)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := &configuration.Configuration{}
	cfg.HTTP.Addr = addr
	cfg.HTTP.TLS.Certificate, cfg.HTTP.TLS.Key = certFile, keyFile
	cfg.Storage = configuration.Storage{"inmemory": configuration.Parameters{}}
	cfg.Log.Level = "fatal" // a push asks for what is missing first: 404s are no error here
	cfg.Log.AccessLog.Disabled = true
	if os.Getenv("OTEL_TRACES_EXPORTER") == "" {
		// The registry exports no traces (it would post them to localhost:4318).
		_ = os.Setenv("OTEL_TRACES_EXPORTER", "none")
	}
	reg, err := dregistry.NewRegistry(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = reg.ListenAndServe() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = reg.Shutdown(ctx)
	})
	r := &Registry{Addr: addr, CAFile: certFile, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := r.client.Get("https://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test registry on %s never answered: %v", addr, err)
		}
	}
}

// Digest is the digest the registry serves for repository:tag, read
// over https on its own (not with the code under test); "" when absent.
func (r *Registry) Digest(t testing.TB, ref string) string {
	t.Helper()
	repo, tag, _ := strings.Cut(ref, ":")
	req, err := http.NewRequest(http.MethodHead, "https://"+r.Addr+"/v2/"+repo+"/manifests/"+tag, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", strings.Join([]string{"application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json",
		"application/vnd.docker.distribution.manifest.v2+json", "application/vnd.docker.distribution.manifest.list.v2+json"}, ","))
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return ""
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD %s: %s", ref, resp.Status)
	}
	return resp.Header.Get("Docker-Content-Digest")
}

// Repositories are the registry's repositories.
func (r *Registry) Repositories(t testing.TB) []string {
	t.Helper()
	resp, err := r.client.Get("https://" + r.Addr + "/v2/_catalog")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Repositories []string `json:"repositories"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Repositories
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeCert(t testing.TB, certFile, keyFile string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test registry"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}
