package source

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A url source is fetched from where the plan says and no further: a
// redirect within its server is followed; one to another port of the
// same address (another server) or down to http:// is not, and the
// server it points to is never asked.
func TestReadURLRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := http.NewServeMux()
	other.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		_, _ = w.Write([]byte(cmA))
	})
	otherTLS := newServer(t, httptest.NewUnstartedServer(other), true)
	otherPlain := newServer(t, httptest.NewUnstartedServer(other), false)

	mux := http.NewServeMux()
	mux.HandleFunc("/ok.yaml", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(cmA)) })
	mux.Handle("/same", http.RedirectHandler("/ok.yaml", http.StatusFound))
	mux.Handle("/other-port", http.RedirectHandler(otherTLS.URL+"/ok.yaml", http.StatusFound))
	mux.Handle("/to-http", http.RedirectHandler(otherPlain.URL+"/ok.yaml", http.StatusMovedPermanently))
	srv := newServer(t, httptest.NewUnstartedServer(mux), true)

	base := t.TempDir()
	write(t, filepath.Join(base, "ca.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	src := func(path string) v1alpha1.Source { return v1alpha1.Source{URL: srv.URL + path, CAFile: "ca.pem"} }

	checkRead(t, src("/same"), Env{BaseDir: base}, []string{"a"}, "")
	for _, tt := range []struct{ path, want string }{
		{"/other-port", "redirects to another host"},
		{"/to-http", "not https://"},
	} {
		for _, allow := range []bool{false, true} {
			_, err := Read(context.Background(), src(tt.path), Env{BaseDir: base, AllowHTTP: allow})
			if err == nil || !strings.Contains(err.Error(), "redirect refused") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s (allowHTTP %v): Read error = %v, want a refused redirect (%s)", tt.path, allow, err, tt.want)
			}
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the server redirected to was asked %d times", n)
	}
}

func TestSameServer(t *testing.T) {
	for _, tt := range []struct {
		from, to string
		want     bool
	}{
		{"https://a.example/x", "https://A.example:443/y", true},
		{"https://a.example/x", "https://a.example:8443/y", false},
		{"https://127.0.0.1:8443/x", "https://127.0.0.1:9443/y", false},
		{"https://a.example/x", "https://b.example/y", false},
		{"http://a.example/x", "https://a.example/y", true},
		{"http://a.example:8080/x", "https://a.example:8443/y", false},
	} {
		req := func(u string) *http.Request { r, _ := http.NewRequest("GET", u, nil); return r }
		if got := sameServer(req(tt.from).URL, req(tt.to).URL); got != tt.want {
			t.Errorf("sameServer(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}
