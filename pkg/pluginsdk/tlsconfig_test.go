package pluginsdk_test

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/plugintest"
)

// A plugin served with ServerTLS and a client CA answers a client
// that presents a certificate from that CA, and no other.
func TestServeMutualTLS(t *testing.T) {
	ca := plugintest.NewCA(t)
	server, client := ca.Issue(t), ca.Issue(t, "upshift-controller")
	dir := t.TempDir()
	files := map[string][]byte{"tls.crt": server.CertPEM, "tls.key": server.KeyPEM, "ca.crt": ca.CertPEM}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := pluginsdk.ServerTLSFromFiles(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientAuth != tls.RequireAndVerifyClientCert || cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("client auth %v, min version %x", cfg.ClientAuth, cfg.MinVersion)
	}
	s := serve(t, &fakeCluster{}, pluginsdk.WithTLS(cfg))

	check := func(clientCfg *tls.Config) error {
		conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(credentials.NewTLS(clientCfg)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, err = healthpb.NewHealthClient(conn).Check(callCtx(t), &healthpb.HealthCheckRequest{})
		return err
	}
	withCert, err := pluginsdk.ClientTLS(ca.CertPEM, client.CertPEM, client.KeyPEM, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := check(withCert); err != nil {
		t.Errorf("a client with a certificate of the CA: %v", err)
	}
	without, err := pluginsdk.ClientTLS(ca.CertPEM, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := check(without); err == nil {
		t.Error("a client without a certificate was answered")
	}
}

// The TLS helpers name the input they cannot use.
func TestTLSConfigErrors(t *testing.T) {
	pair := plugintest.NewCA(t).Issue(t)
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"no CA certificate", func() error { _, err := pluginsdk.ClientTLS([]byte("junk"), nil, nil, ""); return err }, "ca: no PEM certificate found"},
		{"a key for a CA", func() error { _, err := pluginsdk.ClientTLS(pair.KeyPEM, nil, nil, ""); return err }, "ca: no PEM certificate found"},
		{"certificate without key", func() error { _, err := pluginsdk.ClientTLS(nil, pair.CertPEM, nil, ""); return err }, "without its key"},
		{"key without certificate", func() error { _, err := pluginsdk.ClientTLS(nil, nil, pair.KeyPEM, ""); return err }, "without its certificate"},
		{"server without key", func() error { _, err := pluginsdk.ServerTLS(pair.CertPEM, nil, nil); return err }, "certificate and key are both required"},
		{"server key mismatch", func() error {
			_, err := pluginsdk.ServerTLS(pair.CertPEM, plugintest.NewCA(t).Issue(t).KeyPEM, nil)
			return err
		}, "certificate and key"},
		{"bad client CA", func() error { _, err := pluginsdk.ServerTLS(pair.CertPEM, pair.KeyPEM, []byte("x")); return err }, "client CA: no PEM certificate found"},
		{"missing file", func() error { _, err := pluginsdk.ServerTLSFromFiles("/nonexistent/tls.crt", "k", ""); return err }, "certificate file:"},
	} {
		if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	cfg, err := pluginsdk.ClientTLS(nil, nil, nil, "plugin.example")
	if err != nil || cfg.RootCAs != nil || cfg.ServerName != "plugin.example" {
		t.Errorf("ClientTLS without a CA: %+v, %v; want the system roots and the server name", cfg, err)
	}
}
