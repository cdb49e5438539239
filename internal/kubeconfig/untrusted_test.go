package kubeconfig_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/kubeconfig"
)

// kubeconfigWith is a kubeconfig whose current context uses cluster east
// and user ops, with extra lines in each (indented under them); a second
// context, unused, has a user that runs a program and reads a file.
func kubeconfigWith(cluster, user string) []byte {
	return []byte(`apiVersion: v1
kind: Config
current-context: east
contexts:
- name: east
  context: {cluster: east, user: ops}
- name: laptop
  context: {cluster: east, user: laptop}
clusters:
- name: east
  cluster:
    server: https://127.0.0.1:6443
` + indent(cluster) + `users:
- name: ops
  user:
` + indent(user) + `- name: laptop
  user:
    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, interactiveMode: Never}
`)
}

func indent(lines string) string {
	if lines == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Each field that would run a program, read a file of the reader's
// machine or send requests through a proxy is refused, named as the
// kubeconfig spells it, with the fix. The paths do not exist: an error
// about a missing file would mean something tried to read them.
func TestUntrustedRefuses(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	token := "token: " + b64("x") + "\n"
	for _, tc := range []struct {
		name, cluster, user string
		want                []string
	}{
		{"exec", "", "exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, touch " + marker + "], interactiveMode: Never}",
			[]string{"users[ops].exec: a kubeconfig read from the cluster may not run a program; embed a token or client certificate instead"}},
		{"auth-provider", "", "auth-provider: {name: oidc, config: {idp-issuer-url: https://127.0.0.1:1}}",
			[]string{"users[ops].auth-provider:", "embed a token or client certificate instead"}},
		{"tokenFile", "", "tokenFile: " + filepath.Join(dir, "token"),
			[]string{"users[ops].tokenFile: a kubeconfig read from the cluster may not read a file", "embed it as token instead"}},
		{"client-certificate", "", "client-certificate: " + filepath.Join(dir, "crt") + "\nclient-key-data: " + b64("key"),
			[]string{"users[ops].client-certificate:", "embed it as client-certificate-data instead"}},
		{"client-key", "", "client-certificate-data: " + b64("crt") + "\nclient-key: " + filepath.Join(dir, "key"),
			[]string{"users[ops].client-key:", "embed it as client-key-data instead"}},
		{"certificate-authority", "certificate-authority: " + filepath.Join(dir, "ca"), token,
			[]string{"clusters[east].certificate-authority:", "embed the CA as certificate-authority-data instead"}},
		{"proxy-url", "proxy-url: http://127.0.0.1:3128", token,
			[]string{"clusters[east].proxy-url:", "remove proxy-url"}},
		{"all at once", "proxy-url: http://127.0.0.1:3128", "tokenFile: /t\nexec: {apiVersion: v1, command: sh, interactiveMode: Never}",
			[]string{"clusters[east].proxy-url", "users[ops].exec", "users[ops].tokenFile"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := kubeconfig.Untrusted(kubeconfigWith(tc.cluster, tc.user))
			if err == nil {
				t.Fatalf("accepted, as %+v; want refused", cfg)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "no such file") {
				t.Errorf("error %q: something tried to read a path of the kubeconfig", err)
			}
		})
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the exec stanza's program ran")
	}
}

// A kubeconfig with its credentials embedded builds a rest.Config with
// exactly those, and nothing that reads a file, runs a program or picks a
// proxy; the unused context's user (exec, tokenFile) is never read.
func TestUntrustedBuildsFromEmbeddedData(t *testing.T) {
	cfg, err := kubeconfig.Untrusted(kubeconfigWith(
		"certificate-authority-data: "+b64("CA")+"\ntls-server-name: api.east\ndisable-compression: true",
		"client-certificate-data: "+b64("CRT")+"\nclient-key-data: "+b64("KEY")+"\ntoken: secret-token\nas: alice\nas-groups: [admins]"))
	if err != nil {
		t.Fatal(err)
	}
	want := &rest.Config{
		Host:               "https://127.0.0.1:6443",
		DisableCompression: true,
		TLSClientConfig:    rest.TLSClientConfig{ServerName: "api.east", CAData: []byte("CA"), CertData: []byte("CRT"), KeyData: []byte("KEY")},
		BearerToken:        "secret-token",
		Impersonate:        rest.ImpersonationConfig{UserName: "alice", Groups: []string{"admins"}},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("rest.Config\n%+v\nwant\n%+v", cfg, want)
	}

	cfg, err = kubeconfig.Untrusted(kubeconfigWith("insecure-skip-tls-verify: true", "username: bob\npassword: pw"))
	if err != nil {
		t.Fatal(err)
	}
	want = &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Username: "bob", Password: "pw"}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("rest.Config\n%+v\nwant\n%+v", cfg, want)
	}
}

// What cannot be used is said with the field and the fix, never as a
// client that falls back to anything.
func TestUntrustedRefusesIncomplete(t *testing.T) {
	good := string(kubeconfigWith("", "token: t"))
	for _, tc := range []struct{ name, kubeconfig, want string }{
		{"empty", "", "current-context: empty"},
		{"not yaml", "{", "not a kubeconfig"},
		{"no current context", strings.Replace(good, "current-context: east", "", 1), "current-context: empty"},
		{"unknown context", strings.Replace(good, "current-context: east", "current-context: west", 1), `current-context: "west" is not in contexts`},
		{"unknown cluster", strings.Replace(good, "{cluster: east, user: ops}", "{cluster: west, user: ops}", 1), `contexts[east].cluster: "west" is not in clusters`},
		{"unknown user", strings.Replace(good, "{cluster: east, user: ops}", "{cluster: east, user: dev}", 1), `contexts[east].user: "dev" is not in users`},
		{"no server", strings.Replace(good, "server: https://127.0.0.1:6443", "server: ''", 1), "clusters[east].server: empty"},
		{"two ways to log in", string(kubeconfigWith("", "token: t\nusername: u\npassword: p")), "more than one authentication method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := kubeconfig.Untrusted([]byte(tc.kubeconfig))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Untrusted: %+v, %v; want an error saying %q", cfg, err, tc.want)
			}
		})
	}
}
