// Package kubeconfig reads the kubeconfigs Upshift finds in a cluster (a
// fleet member's Secret, a catalog peer's Secret): input anyone who may
// write such a Secret chose.
//
// It exists because clientcmd trusts the file it reads, as it should for
// a person's own ~/.kube/config: it runs exec plugins and auth providers
// in the reading process, reads tokenFile and certificate paths from the
// reader's disk, and sends requests through proxy-url. Upshift cannot
// trust a kubeconfig from a Secret: a tokenFile of
// /var/run/secrets/kubernetes.io/serviceaccount/token with a server of
// the writer's choice would send the controller's own token there, and
// an exec stanza would run a program in the controller (or on the
// operator's machine, for the CLI). Untrusted refuses all of those and
// builds the client from the data embedded in the kubeconfig alone.
package kubeconfig

import (
	"fmt"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Untrusted parses a kubeconfig read from a cluster or an API body into
// the rest.Config of its current context, refusing what would make the
// reader run a program, read its own files or use a proxy. Only the
// current context, its cluster and its user are checked and used: the
// other entries are never read, so they may hold anything. Errors name
// the field as the kubeconfig spells it (users[ops].exec, ...) and the
// fix; callers add where the kubeconfig came from.
func Untrusted(data []byte) (*rest.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("not a kubeconfig: %w", err)
	}
	name := cfg.CurrentContext
	if name == "" {
		return nil, fmt.Errorf("current-context: empty; set it to the context to use")
	}
	kctx, ok := cfg.Contexts[name]
	if !ok {
		return nil, fmt.Errorf("current-context: %q is not in contexts; name one of its contexts", name)
	}
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("contexts[%s].cluster: %q is not in clusters; name one of its clusters", name, kctx.Cluster)
	}
	user, ok := cfg.AuthInfos[kctx.AuthInfo]
	if !ok {
		return nil, fmt.Errorf("contexts[%s].user: %q is not in users; name one of its users", name, kctx.AuthInfo)
	}
	refused := append(refusedCluster(kctx.Cluster, cluster), refusedUser(kctx.AuthInfo, user)...)
	if len(refused) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(refused, "; "))
	}
	if cluster.Server == "" {
		return nil, fmt.Errorf("clusters[%s].server: empty; set the API server's URL", kctx.Cluster)
	}
	// clientcmd's own consistency checks (one way to authenticate, a key
	// with a certificate, ...), on the current context only: after the
	// refusals above they open no file (Validate would, for every entry).
	if err := clientcmd.ConfirmUsable(*cfg, name); err != nil {
		return nil, err
	}
	return restConfig(cluster, user), nil
}

// fromCluster is the end of every refusal: where the kubeconfig came from
// decides nothing about the reader's own machine.
const fromCluster = "a kubeconfig read from the cluster may not"

// refusedCluster lists what the cluster entry may not use.
func refusedCluster(name string, c *clientcmdapi.Cluster) []string {
	var out []string
	if c.CertificateAuthority != "" {
		out = append(out, fmt.Sprintf("clusters[%s].certificate-authority: %s read a file of Upshift's machine; embed the CA as certificate-authority-data instead", name, fromCluster))
	}
	if c.ProxyURL != "" {
		out = append(out, fmt.Sprintf("clusters[%s].proxy-url: %s send requests through a proxy of its choice; remove proxy-url (Upshift's own HTTPS_PROXY applies)", name, fromCluster))
	}
	return out
}

// refusedUser lists what the user entry may not use.
func refusedUser(name string, u *clientcmdapi.AuthInfo) []string {
	var out []string
	if u.Exec != nil {
		out = append(out, fmt.Sprintf("users[%s].exec: %s run a program; embed a token or client certificate instead", name, fromCluster))
	}
	if u.AuthProvider != nil {
		out = append(out, fmt.Sprintf("users[%s].auth-provider: %s use an auth provider plugin (it runs in Upshift's process); embed a token or client certificate instead", name, fromCluster))
	}
	files := []struct{ field, path, fix string }{
		{"tokenFile", u.TokenFile, "token"},
		{"client-certificate", u.ClientCertificate, "client-certificate-data"},
		{"client-key", u.ClientKey, "client-key-data"},
	}
	for _, f := range files {
		if f.path != "" {
			out = append(out, fmt.Sprintf("users[%s].%s: %s read a file of Upshift's machine; embed it as %s instead", name, f.field, fromCluster, f.fix))
		}
	}
	return out
}

// restConfig builds the client's config by hand, from the embedded data
// only, rather than through clientcmd.DirectClientConfig: that is the
// code which resolves files, exec plugins and proxies, and a field a
// later client-go adds to it would reach the client unreviewed. Nothing
// here falls back to in-cluster config or to files.
func restConfig(c *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) *rest.Config {
	return &rest.Config{
		Host:               c.Server,
		DisableCompression: c.DisableCompression,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   c.InsecureSkipTLSVerify,
			ServerName: c.TLSServerName,
			CAData:     c.CertificateAuthorityData,
			CertData:   u.ClientCertificateData,
			KeyData:    u.ClientKeyData,
		},
		BearerToken: u.Token,
		Username:    u.Username,
		Password:    u.Password,
		Impersonate: rest.ImpersonationConfig{
			UserName: u.Impersonate,
			UID:      u.ImpersonateUID,
			Groups:   u.ImpersonateGroups,
			Extra:    u.ImpersonateUserExtra,
		},
	}
}
