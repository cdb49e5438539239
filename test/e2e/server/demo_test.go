package server_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// TestDemoUI runs `upshift demo --ui` as `make demo UI=1` does: it starts
// its own cluster, installs the demo platform's 1.0.0 and serves the
// wizard, printing the URL, the password file and a login token; the
// token works, the page is served and the wizard's check finds the demo
// catalog's hop to 1.1.0. Its cluster lives in a test directory and is
// stopped at the end.
func TestDemoUI(t *testing.T) {
	t.Parallel()
	testenv.SkipIfShort(t)
	bin := testenv.UpshiftBinary(t)
	dir, err := os.MkdirTemp("", testenv.DirPrefix+"demo-ui-")
	if err != nil {
		t.Fatal(err)
	}
	config := t.TempDir()
	env := append(os.Environ(), "UPSHIFT_CLUSTERS_DIR="+dir, "KUBECONFIG=", "XDG_CONFIG_HOME="+config)
	t.Cleanup(func() {
		down := exec.Command(bin, "cluster", "down", "--name", "demo-ui")
		down.Env = env
		if out, err := down.CombinedOutput(); err != nil {
			t.Logf("cluster down: %v\n%s", err, out)
		}
		os.RemoveAll(dir)
	})
	cmd := exec.Command(bin, "demo", "--ui", "--name", "demo-ui", "--listen", "127.0.0.1:0")
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	log := &testenv.SyncBuffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL); _ = cmd.Wait() })

	var token, url, certFile, passwordFile string
	tokenLine := regexp.MustCompile(`Authorization: Bearer ([A-Za-z0-9._-]+)`)
	passwordLine := regexp.MustCompile(`log in with the password in (\S+),`)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(5 * time.Minute)
	for url == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("upshift demo --ui ended before serving:\n%s", log)
			}
			if m := tokenLine.FindStringSubmatch(line); m != nil {
				token = m[1]
			}
			if m := passwordLine.FindStringSubmatch(line); m != nil {
				passwordFile = m[1]
			}
			if m := servingLine.FindStringSubmatch(line); m != nil {
				url, certFile = m[1], m[2]
			}
		case <-timeout:
			t.Fatalf("upshift demo --ui did not serve within 5 minutes:\n%s", log)
		}
	}
	go func() {
		for range lines { // keep the pipe drained
		}
	}()
	if token == "" || passwordFile == "" {
		t.Fatalf("the demo printed no token (%q) or password file (%q)", token, passwordFile)
	}
	if !strings.HasPrefix(passwordFile, filepath.Join(config, "upshift")) {
		t.Errorf("the password file %s is not in the user's config directory", passwordFile)
	}
	if st, err := os.Stat(passwordFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the password file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	s := &server{t: t, url: url, log: log, client: &http.Client{Timeout: time.Minute,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}
	if code, page := s.call("GET", "/", "", nil); code != http.StatusOK || !strings.Contains(string(page), "<html") {
		t.Errorf("GET / = %d", code)
	}
	var check checkResult
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/infra/check", token, map[string]string{"targetVersion": "1.1.0"}, &check)
	if !check.RequiresInfraUpgrade || check.CurrentVersion != "1.0.0" || len(check.Hops) != 1 || check.Hops[0].Plan != "demo-1.1.0" {
		t.Errorf("the demo's check: %+v", check)
	}
	password, err := os.ReadFile(passwordFile)
	if err != nil {
		t.Fatal(err)
	}
	s.login(strings.TrimSpace(string(password)))
}
