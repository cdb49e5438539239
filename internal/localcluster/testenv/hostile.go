package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Lure is what a hostile kubeconfig Secret would use against whoever
// reads it: a TLS listener on 127.0.0.1 posing as its API server, a file
// holding a secret token the reader's machine has (as a ServiceAccount
// token would be), and a marker file an exec stanza would create. A test
// says none of them was used: no connection, no token, no marker.
type Lure struct {
	Server    string // https://127.0.0.1:<port>
	TokenFile string
	Token     string
	Marker    string // created by ExecKubeconfig's program, if it runs

	mu       sync.Mutex
	accepted int
	tokens   []string // Authorization headers received
}

// NewLure opens the listener, closed when the test ends.
func NewLure(t testing.TB) *Lure {
	t.Helper()
	dir := t.TempDir()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	l := &Lure{TokenFile: filepath.Join(dir, "token"), Token: "lure-" + hex.EncodeToString(b), Marker: filepath.Join(dir, "ran")}
	if err := os.WriteFile(l.TokenFile, []byte(l.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.tokens = append(l.tokens, r.Header.Get("Authorization"))
		l.mu.Unlock()
		http.Error(w, "a lure", http.StatusUnauthorized)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			l.mu.Lock()
			l.accepted++
			l.mu.Unlock()
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	l.Server = srv.URL
	return l
}

// TokenFileKubeconfig sends the token of the reader's file to the lure
// (its certificate accepted without a check, so the token would arrive).
func (l *Lure) TokenFileKubeconfig() []byte {
	return l.kubeconfig("tokenFile: " + l.TokenFile)
}

// ExecKubeconfig runs a program that creates the marker.
func (l *Lure) ExecKubeconfig() []byte {
	return l.kubeconfig(`exec:
      apiVersion: client.authentication.k8s.io/v1
      command: /bin/sh
      args: ["-c", "touch ` + l.Marker + `"]
      interactiveMode: Never`)
}

func (l *Lure) kubeconfig(user string) []byte {
	return []byte(`apiVersion: v1
kind: Config
current-context: lure
contexts:
- name: lure
  context: {cluster: lure, user: ops}
clusters:
- name: lure
  cluster: {server: "` + l.Server + `", insecure-skip-tls-verify: true}
users:
- name: ops
  user:
    ` + user + "\n")
}

// Used says what of the lure was used, "" when nothing was.
func (l *Lure) Used() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	if l.accepted > 0 {
		out = append(out, "the listener accepted "+strconv.Itoa(l.accepted)+" connection(s)")
	}
	for _, h := range l.tokens {
		if strings.Contains(h, l.Token) {
			out = append(out, "the token file's token was sent")
			break
		}
	}
	if _, err := os.Stat(l.Marker); err == nil {
		out = append(out, "the exec stanza's program ran")
	}
	return strings.Join(out, "; ")
}
