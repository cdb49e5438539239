package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	upshiftserver "github.com/upshift-dev/upshift/internal/server"
)

// TestAuthAndTheAPIDocument: health and the document are open; every
// other route wants a token (401), a viewer's token reads but may not act
// (403), a wrong password and a forged token are refused; every path the
// document lists is served; the certificate generated on first start is
// kept for the next.
func TestAuthAndTheAPIDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)

	s.must(http.StatusOK, "GET", "/api/health", "", nil, nil)
	// The web UI is served, without a token (it logs in itself).
	if code, page := s.call("GET", "/", "", nil); code != http.StatusOK || !strings.Contains(string(page), "<html") {
		t.Errorf("GET / = %d %.200s, want the web UI's page", code, page)
	}
	for _, path := range []string{"/api/linux/upgrade/infra/status", "/api/runs", "/api/linux/upgrade/state"} {
		code, body := s.call("GET", path, "", nil)
		var ae apiError
		if code != http.StatusUnauthorized || json.Unmarshal(body, &ae) != nil || ae.StatusCode != 401 {
			t.Errorf("GET %s without a token = %d %s, want 401 with an APIError", path, code, body)
		}
		if code, _ := s.call("GET", path, "not-a-token", nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s with a forged token = %d, want 401", path, code)
		}
	}
	if code, _ := s.call("POST", "/api/auth/login", "", map[string]string{"password": "wrong"}); code != http.StatusUnauthorized {
		t.Errorf("login with a wrong password = %d, want 401", code)
	}

	// Password guessing is slowed: after ten failures, 429 even for the
	// right password, until the budget refills.
	for i := 0; i < 9; i++ {
		s.call("POST", "/api/auth/login", "", map[string]string{"password": "guess"})
	}
	if code, _ := s.call("POST", "/api/auth/login", "", map[string]string{"password": adminPassword}); code != http.StatusTooManyRequests {
		t.Errorf("a login after ten failures = %d, want 429", code)
	}
	time.Sleep(11 * time.Second)

	viewer := s.login(viewerPassword)
	s.must(http.StatusOK, "GET", "/api/linux/upgrade/infra/status", viewer, nil, nil)
	s.must(http.StatusOK, "GET", "/api/runs", viewer, nil, nil)
	for _, path := range []string{"/api/linux/upgrade/infra/upgrade", "/api/linux/upgrade/infra/start", "/api/linux/upgrade/app/upgrade", "/api/runs/x/approve", "/api/runs/x/rollback", "/api/plans/preview"} {
		code, body := s.call("POST", path, viewer, map[string]string{})
		if code != http.StatusForbidden {
			t.Errorf("POST %s with a viewer token = %d %s, want 403", path, code, body)
		}
	}

	if code, body := s.call("POST", "/api/linux/upgrade/infra/check", viewer, map[string]string{"targetVersion": "1.1.0", "catalog": "https://example.com/catalog.yaml"}); code != http.StatusForbidden {
		t.Errorf("a viewer's check of another catalog = %d %s, want 403", code, body)
	}
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/infra/check", viewer, map[string]string{"targetVersion": "1.1.0"}, nil)

	// Every path of the document is served: a probe never gets the
	// catch-all's "no route".
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	s.must(http.StatusOK, "GET", "/api/openapi.json", "", nil, &doc)
	admin := s.login(adminPassword)
	if len(doc.Paths) < 15 {
		t.Fatalf("the document lists %d paths", len(doc.Paths))
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "post" && !strings.Contains(path, "/runs/") && path != "/api/auth/login" && path != "/api/plans/preview" {
				continue // the upgrade's actions change state: the other tests call them
			}
			if strings.HasSuffix(path, "/events") {
				continue // a stream: the upgrade test reads it
			}
			code, body := s.call(strings.ToUpper(method), strings.ReplaceAll(path, "{name}", "no-such-run"), admin, map[string]string{})
			if strings.Contains(string(body), "no route") || code == http.StatusMethodNotAllowed {
				t.Errorf("%s %s is documented but not served: %d %s", method, path, code, body)
			}
		}
	}
	code, body := s.call("GET", "/api/no/such/route", admin, nil)
	if code != http.StatusNotFound || !strings.Contains(string(body), "no route") {
		t.Errorf("an unknown route = %d %s", code, body)
	}

	// The generated certificate and the signing key are kept: after a
	// restart the same token works over the same trusted certificate.
	cert, err := os.ReadFile(filepath.Join(e.stateDir, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	s.kill()
	s2 := e.serve("--catalog", catalog)
	s2.must(http.StatusOK, "GET", "/api/runs", admin, nil, nil)
	if again, _ := os.ReadFile(filepath.Join(e.stateDir, "tls.crt")); string(again) != string(cert) {
		t.Error("the certificate was generated again on restart")
	}
}

// TestServeRefusesPlainHTTPOffLoopback: plain HTTP only on loopback, and
// no password on the command line.
func TestServeRefusesPlainHTTPOffLoopback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"serve", "--insecure-http", "--listen", "0.0.0.0:0", "--password-file", filepath.Join(e.passDir, "admin")}, "loopback address only"},
		{[]string{"serve"}, "--password-file"},
		{[]string{"serve", "--password", "x"}, "unknown flag: --password"},
	} {
		out, err := runBinary(e, tc.args...)
		if err == nil || !strings.Contains(out, tc.says) {
			t.Errorf("upshift %v: %v\n%s\nwant it refused saying %q", tc.args, err, out, tc.says)
		}
	}
}

// TestServeWithTheOperatorsCertificate: --tls-cert/--tls-key serve the
// given certificate, and none is generated.
func TestServeWithTheOperatorsCertificate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, catalog, _ := e.platform()
	own := t.TempDir()
	files, err := upshiftserver.EnsureCertificate(own, "", "", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := e.serve("--catalog", catalog, "--tls-cert", files.Cert, "--tls-key", files.Key)
	s.must(http.StatusOK, "GET", "/api/health", "", nil, nil)
	if _, err := os.Stat(filepath.Join(e.stateDir, "tls.crt")); !os.IsNotExist(err) {
		t.Errorf("a certificate was generated in the state directory although one was given: %v", err)
	}
	if out, err := runBinary(e, "serve", "--tls-cert", files.Cert, "--password-file", filepath.Join(e.passDir, "admin"), "--runs-namespace", e.runsNS, "--listen", "127.0.0.1:0"); err == nil || !strings.Contains(out, "--tls-cert and --tls-key go together") {
		t.Errorf("--tls-cert alone: %v\n%s", err, out)
	}
}

// TestServeWithPasswordsFromASecret: --password-secret NAMESPACE/NAME
// reads the admin password under the Secret's key password and the
// viewer's under viewerPassword (docs/api.md); each logs in as its role,
// and the viewer may not act. A missing Secret, or a Secret without the
// admin's key, is refused before anything is served, with an error that
// names what is missing and how to add it.
func TestServeWithPasswordsFromASecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	const name = "upshift-passwords"
	e.passwordSecret = ns + "/" + name
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--state-dir", e.stateDir, "--runs-namespace", e.runsNS, "--catalog", catalog},
		e.passwordFlags()...)
	refused := func(why string, says ...string) {
		t.Helper()
		out, err := runBinary(e, args...)
		if err == nil || strings.Contains(out, "serving ") {
			t.Fatalf("%s: upshift serve = %v, want it refused before serving:\n%s", why, err, out)
		}
		for _, s := range says {
			if !strings.Contains(out, s) {
				t.Errorf("%s: the error lacks %q:\n%s", why, s, out)
			}
		}
	}

	refused("no Secret", e.passwordSecret, "not found",
		"kubectl create secret generic "+name+" -n "+ns+" --from-file=password=")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Data: map[string][]byte{"viewerPassword": []byte(viewerPassword)}}
	if _, err := e.cs.CoreV1().Secrets(ns).Create(e.ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused("no admin key", e.passwordSecret, `no key "password"`, "add the admin password under it")

	// With a file's trailing newline, as kubectl --from-file keeps it: the
	// admin still logs in with the password alone.
	secret.Data["password"] = []byte(adminPassword + "\n")
	if _, err := e.cs.CoreV1().Secrets(ns).Update(e.ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := e.serve("--catalog", catalog)
	tokens := map[string]string{}
	for role, password := range map[string]string{"admin": adminPassword, "viewer": viewerPassword} {
		var login struct{ Token, Role string }
		s.must(http.StatusOK, "POST", "/api/auth/login", "", map[string]string{"password": password}, &login)
		if login.Role != role {
			t.Errorf("the %s password logged in as %q", role, login.Role)
		}
		tokens[role] = login.Token
	}
	s.must(http.StatusOK, "GET", "/api/runs", tokens["viewer"], nil, nil)
	if code, body := s.call("POST", "/api/runs/no-such-run/approve", tokens["viewer"], map[string]string{}); code != http.StatusForbidden {
		t.Errorf("a viewer's approval = %d %s, want 403", code, body)
	}
	if code, body := s.call("POST", "/api/runs/no-such-run/approve", tokens["admin"], map[string]string{}); code != http.StatusNotFound {
		t.Errorf("an admin's approval of no run = %d %s, want 404 (allowed, no such run)", code, body)
	}
}
