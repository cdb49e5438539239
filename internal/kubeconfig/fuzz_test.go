package kubeconfig_test

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/upshift-dev/upshift/internal/fuzzcheck"
	"github.com/upshift-dev/upshift/internal/kubeconfig"
)

// FuzzUntrusted feeds kubeconfigs, as a Secret would hold them, to
// Untrusted. What it accepts runs no program, reads no file and uses no
// proxy: the client config has no exec or auth provider, no file path,
// no proxy, and a server; what it refuses, it refuses without repeating
// a token or password of the kubeconfig in the error.
func FuzzUntrusted(f *testing.F) {
	f.Add(kubeconfigWith("", "token: s3cr3t-token-0123456789"))
	f.Add(kubeconfigWith("certificate-authority: /etc/ca.pem", "token: s3cr3t-token-0123456789"))
	f.Add(kubeconfigWith("proxy-url: http://proxy:3128", "password: hunter2hunter2\nusername: ops"))
	f.Add(kubeconfigWith("", "exec: {apiVersion: client.authentication.k8s.io/v1, command: sh}\ntoken: s3cr3t-token-0123456789"))
	f.Add(kubeconfigWith("", "tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"))
	f.Add(kubeconfigWith("insecure-skip-tls-verify: true", "client-certificate-data: "+b64("cert")+"\nclient-key-data: "+b64("key")))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Config","current-context":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			return
		}
		defer fuzzcheck.Within("Untrusted", data)()
		cfg, err := kubeconfig.Untrusted(data)
		if err != nil {
			checkNoSecretIn(t, data, err.Error())
			return
		}
		switch {
		case cfg.ExecProvider != nil, cfg.AuthProvider != nil, cfg.AuthConfigPersister != nil:
			t.Fatalf("accepted a kubeconfig that runs a program or an auth provider: %+v", cfg)
		case cfg.BearerTokenFile != "", cfg.CAFile != "", cfg.CertFile != "", cfg.KeyFile != "":
			t.Fatalf("accepted a kubeconfig that reads a file: %+v", cfg)
		case cfg.Proxy != nil:
			t.Fatal("accepted a kubeconfig with a proxy")
		case cfg.Host == "":
			t.Fatal("accepted a kubeconfig without a server")
		}
	})
}

// checkNoSecretIn fails when msg repeats a token or password of the
// kubeconfig (one long enough not to be a word of the message, and not
// also a name or server, which errors may name).
func checkNoSecretIn(t *testing.T, data []byte, msg string) {
	t.Helper()
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return
	}
	var public []string
	for name, c := range cfg.Clusters {
		public = append(public, name, c.Server)
	}
	for name, c := range cfg.Contexts {
		public = append(public, name, c.Cluster, c.AuthInfo)
	}
	for name := range cfg.AuthInfos {
		public = append(public, name)
	}
	public = append(public, cfg.CurrentContext)
	for _, u := range cfg.AuthInfos {
		for _, secret := range []string{u.Token, u.Password} {
			if len(secret) < 12 || !strings.Contains(msg, secret) || containedIn(secret, public) {
				continue
			}
			t.Fatalf("a refused kubeconfig's error repeats its secret %q: %s", secret, msg)
		}
	}
}

func containedIn(s string, list []string) bool {
	for _, l := range list {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
