package engine_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/upshift-dev/upshift/internal/helmx"
)

// secretsServer serves, on 127.0.0.1, what the planted plan fetches, each
// only to a client that presents the marker as the URL's credentials: a
// manifests source (token in the query), a chart repository (user info
// and a token) and a health endpoint (both), healthy when told.
type secretsServer struct {
	*httptest.Server
	healthy atomic.Bool
}

func newSecretsServer(t *testing.T, marker, chartDir string) *secretsServer {
	t.Helper()
	s := &secretsServer{}
	authorized := func(r *http.Request) bool {
		_, pw, ok := r.BasicAuth()
		return ok && pw == marker && r.URL.Query().Get("token") == marker
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/settings.yaml", func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("token") != marker {
			http.Error(rw, "no token", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(rw, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: vault}\ndata: {level: \"2\"}\n")
	})
	charts := http.StripPrefix("/charts/", http.FileServer(http.Dir(chartDir)))
	mux.HandleFunc("/charts/", func(rw http.ResponseWriter, r *http.Request) {
		if !authorized(r) {
			http.Error(rw, "who are you", http.StatusUnauthorized)
			return
		}
		charts.ServeHTTP(rw, r)
	})
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case !authorized(r):
			http.Error(rw, "who are you", http.StatusUnauthorized)
		case !s.healthy.Load():
			http.Error(rw, "not yet", http.StatusServiceUnavailable)
		default:
			fmt.Fprint(rw, "ok")
		}
	})
	s.Server = httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(s.Close)
	return s
}

// withCreds is the server's URL for path with the marker as password and
// as token.
func (s *secretsServer) withCreds(marker, path string) string {
	return strings.Replace(s.URL, "http://", "http://probe:"+marker+"@", 1) + path + "?token=" + marker
}

// writeVaultChart packages the chart vault-addon 1.0.0 into a chart
// repository directory: a Secret rendered from two values (one inline,
// one from a values file) and a ConfigMap labelled with the value tier. The index names the archive
// relatively, so Helm fetches it with the repository's credentials.
func writeVaultChart(t *testing.T, repoDir string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "vault-addon")
	if err := os.MkdirAll(filepath.Join(src, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "Chart.yaml"), "apiVersion: v2\nname: vault-addon\nversion: 1.0.0\n")
	write(t, filepath.Join(src, "values.yaml"), "password: \"\"\napiToken: \"\"\n")
	write(t, filepath.Join(src, "templates", "secret.yaml"), `apiVersion: v1
kind: Secret
metadata: {name: {{ .Release.Name }}-creds}
stringData:
  password: {{ .Values.password | quote }}
  apiToken: {{ .Values.apiToken | quote }}
`)
	write(t, filepath.Join(src, "templates", "config.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-config, labels: {tier: {{ .Values.tier | default \"safe\" | quote }}}}\ndata: {mode: safe}\n")
	ch, err := helmx.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chartutil.Save(ch, repoDir); err != nil {
		t.Fatal(err)
	}
	idx, err := repo.IndexDirectory(repoDir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(repoDir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
}
