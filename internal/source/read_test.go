package source

import (
	"context"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

const (
	cmA = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: demo}\n"
	cmB = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"demo"}}`
	cmC = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: demo}" // no trailing newline
)

func TestReadPathAndInline(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "manifests")
	write(t, filepath.Join(dir, "20-c.yml"), cmC)
	write(t, filepath.Join(dir, "10-b.json"), cmB)
	write(t, filepath.Join(dir, "00-a.yaml"), cmA)
	write(t, filepath.Join(dir, "README.md"), "not a manifest")
	write(t, filepath.Join(dir, "nested", "d.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n")
	write(t, filepath.Join(base, "one.yaml"), cmA)

	tests := []struct {
		name    string
		src     v1alpha1.Source
		want    []string // object names, in order
		wantErr string
	}{
		{name: "file relative to baseDir", src: v1alpha1.Source{Path: "one.yaml"}, want: []string{"a"}},
		{name: "absolute file", src: v1alpha1.Source{Path: filepath.Join(base, "one.yaml")}, want: []string{"a"}},
		{name: "directory: yaml, yml and json, sorted, not recursive", src: v1alpha1.Source{Path: "manifests"}, want: []string{"a", "b", "c"}},
		{name: "inline", src: v1alpha1.Source{Inline: cmA + "---\n" + cmC}, want: []string{"a", "c"}},
		{name: "missing file", src: v1alpha1.Source{Path: "nope.yaml"}, wantErr: "read path nope.yaml"},
		{name: "nothing set", src: v1alpha1.Source{}, wantErr: ErrInvalidSource.Error()},
		{name: "two set", src: v1alpha1.Source{Path: "one.yaml", Inline: cmA}, wantErr: ErrInvalidSource.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRead(t, tt.src, Env{BaseDir: base}, tt.want, tt.wantErr)
		})
	}
}

func TestReadURL(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/crds.yaml", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(cmA + "---\n" + cmB)) })
	mux.HandleFunc("/missing.yaml", http.NotFound)
	tlsSrv := newServer(t, httptest.NewUnstartedServer(mux), true)
	plainSrv := newServer(t, httptest.NewUnstartedServer(mux), false)

	base := t.TempDir()
	cert := tlsSrv.Certificate()
	write(t, filepath.Join(base, "ca.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})))
	write(t, filepath.Join(base, "garbage.pem"), "not a certificate")

	tests := []struct {
		name      string
		src       v1alpha1.Source
		allowHTTP bool
		want      []string
		wantErr   string
	}{
		{name: "https with caFile", src: v1alpha1.Source{URL: tlsSrv.URL + "/crds.yaml", CAFile: "ca.pem"}, want: []string{"a", "b"}},
		{name: "https insecure", src: v1alpha1.Source{URL: tlsSrv.URL + "/crds.yaml", InsecureSkipVerify: true}, want: []string{"a", "b"}},
		{name: "plain http allowed", src: v1alpha1.Source{URL: plainSrv.URL + "/crds.yaml"}, allowHTTP: true, want: []string{"a", "b"}},
		{name: "plain http refused", src: v1alpha1.Source{URL: plainSrv.URL + "/crds.yaml"}, wantErr: "http:// is refused: use an https:// URL, or set spec.allowInsecureHTTP: true"},
		{name: "https unknown CA", src: v1alpha1.Source{URL: tlsSrv.URL + "/crds.yaml"}, wantErr: "certificate"},
		{name: "404 names the status", src: v1alpha1.Source{URL: tlsSrv.URL + "/missing.yaml", CAFile: "ca.pem"}, wantErr: "404 Not Found"},
		{name: "missing caFile", src: v1alpha1.Source{URL: tlsSrv.URL + "/crds.yaml", CAFile: "nope.pem"}, wantErr: "caFile"},
		{name: "caFile without a certificate", src: v1alpha1.Source{URL: tlsSrv.URL + "/crds.yaml", CAFile: "garbage.pem"}, wantErr: "no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRead(t, tt.src, Env{BaseDir: base, AllowHTTP: tt.allowHTTP}, tt.want, tt.wantErr)
		})
	}
}

func checkRead(t *testing.T, src v1alpha1.Source, env Env, want []string, wantErr string) {
	t.Helper()
	b, err := Read(context.Background(), src, env)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("Read error = %v, want one containing %q", err, wantErr)
		}
		if wantErr == ErrInvalidSource.Error() && !errors.Is(err, ErrInvalidSource) {
			t.Errorf("error %v is not ErrInvalidSource", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	objs, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, b)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetName())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("objects = %q, want %q", got, want)
	}
}

// newServer starts s on 127.0.0.1 only.
func newServer(t *testing.T, s *httptest.Server, tls bool) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Listener.Close()
	s.Listener = l
	if tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A URL's credentials (user info, a token in the query) appear in no
// error, whether the server answers an error or cannot be reached.
func TestReadURLErrorsQuoteNoCredentials(t *testing.T) {
	const marker = "s3cr3t-source"
	srv := newServer(t, httptest.NewUnstartedServer(http.NotFoundHandler()), false)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for name, u := range map[string]string{
		"404":         strings.Replace(srv.URL, "http://", "http://u:"+marker+"@", 1) + "/m.yaml?token=" + marker,
		"unreachable": "http://" + marker + ":" + marker + "@" + closed + "/m.yaml?token=" + marker,
	} {
		_, err := Read(context.Background(), v1alpha1.Source{URL: u}, Env{AllowHTTP: true})
		if err == nil || strings.Contains(err.Error(), marker) || !strings.Contains(err.Error(), "read url http://xxxxx@127.0.0.1:") {
			t.Errorf("%s: Read error = %v; want one naming the URL without its credentials", name, err)
		}
	}
}
