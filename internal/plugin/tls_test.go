package plugin

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/plugintest"
)

// noRetry are quick options without retries, for calls meant to fail.
var noRetry = Options{CallTimeout: quick.CallTimeout, Backoff: wait.Backoff{Steps: -1}}

func serverTLS(t *testing.T, pair plugintest.Pair, clientCA []byte) pluginsdk.ServeOption {
	t.Helper()
	cfg, err := pluginsdk.ServerTLS(pair.CertPEM, pair.KeyPEM, clientCA)
	if err != nil {
		t.Fatal(err)
	}
	return pluginsdk.WithTLS(cfg)
}

// A plugin whose certificate comes from a CA the client does not trust is
// refused, and the error says why.
func TestUntrustedPluginRefused(t *testing.T) {
	pluginCA, otherCA := plugintest.NewCA(t), plugintest.NewCA(t)
	addr := startPlugin(t, &fakePlugin{}, serverTLS(t, pluginCA.Issue(t), nil))

	c := dial(t, Endpoint{Address: addr, CA: otherCA.CertPEM}, noRetry)
	_, err := c.GetVersion(callCtx(t), "c1")
	if err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "authority") {
		t.Fatalf("GetVersion from an untrusted plugin: %v, want a certificate authority error", err)
	}

	trusting := dial(t, Endpoint{Address: addr, CA: pluginCA.CertPEM}, noRetry)
	if _, err := trusting.GetVersion(callCtx(t), "c1"); err != nil {
		t.Errorf("GetVersion from a trusted plugin: %v", err)
	}
}

// Mutual TLS: a client with a certificate of the plugin's client CA is
// answered; one without a certificate is not.
func TestMutualTLS(t *testing.T) {
	ca := plugintest.NewCA(t)
	addr := startPlugin(t, &fakePlugin{}, serverTLS(t, ca.Issue(t), ca.CertPEM))
	client := ca.Issue(t, "upshift-fleet-controller")

	c := dial(t, Endpoint{Address: addr, CA: ca.CertPEM, Cert: client.CertPEM, Key: client.KeyPEM}, noRetry)
	if _, err := c.ServiceOut(callCtx(t), "c1"); err != nil {
		t.Errorf("ServiceOut with a client certificate: %v", err)
	}
	anonymous := dial(t, Endpoint{Address: addr, CA: ca.CertPEM}, noRetry)
	if _, err := anonymous.GetVersion(callCtx(t), "c1"); err == nil {
		t.Error("a client without a certificate was answered by a plugin that requires one")
	}
}

// Insecure talks plaintext to a plaintext plugin; without it the client
// speaks TLS, and a plaintext plugin cannot answer.
func TestInsecureOnlyWhenAsked(t *testing.T) {
	addr := startPlugin(t, &fakePlugin{}, pluginsdk.Insecure())

	c := dial(t, Endpoint{Address: addr, Insecure: true}, noRetry)
	if _, err := c.GetVersion(callCtx(t), "c1"); err != nil {
		t.Errorf("Insecure to a plaintext plugin: %v", err)
	}
	tlsClient := dial(t, Endpoint{Address: addr, CA: plugintest.NewCA(t).CertPEM}, noRetry)
	if _, err := tlsClient.GetVersion(callCtx(t), "c1"); err == nil {
		t.Error("a TLS client was answered by a plaintext plugin")
	}
	defaultClient := dial(t, Endpoint{Address: addr}, noRetry)
	if _, err := defaultClient.GetVersion(callCtx(t), "c1"); err == nil {
		t.Error("a client without Insecure was answered in plaintext")
	}
}

// An endpoint the client cannot use fails Dial, naming the fields.
func TestEndpointErrors(t *testing.T) {
	pair := plugintest.NewCA(t).Issue(t)
	for _, tc := range []struct {
		ep   Endpoint
		want string
	}{
		{Endpoint{}, "no address"},
		{Endpoint{Address: "p:1", Insecure: true, CA: pair.CertPEM, ServerName: "p"}, "Insecure with CA, ServerName: choose one"},
		{Endpoint{Address: "p:1", Insecure: true, Cert: pair.CertPEM, Key: pair.KeyPEM}, "Insecure with Cert, Key"},
		{Endpoint{Address: "p:1", CA: []byte("not PEM")}, "ca: no PEM certificate found"},
		{Endpoint{Address: "p:1", Cert: pair.CertPEM}, "without its key"},
	} {
		if _, err := Dial(tc.ep, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Dial(%+v): %v, want an error saying %q", tc.ep, err, tc.want)
		} else if errors.Is(err, ErrPluginDown) {
			t.Errorf("Dial(%+v): %v is not the plugin being down", tc.ep, err)
		}
	}
}
