// Package server_test holds the HTTP API's acceptance tests: the real
// `upshift serve` binary, run as a subprocess against the real local
// control plane, called over TLS as a client would, killed and restarted
// as an operator's machine would be.
package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	adminPassword  = "admin-password-1"
	viewerPassword = "viewer-password-1"
)

// env is one test's part of the shared cluster: its own runs namespace
// (so its own lease and wizard state) and the binary pointed at it.
type env struct {
	t          *testing.T
	ctx        context.Context
	cs         kubernetes.Interface
	kubeconfig string
	bin        string
	runsNS     string
	stateDir   string
	passDir    string
	// passwordSecret, when set (NAMESPACE/NAME), is where the server
	// reads its passwords instead of the files in passDir.
	passwordSecret string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, testenv.Cluster(t))
}

// newEnvOn is newEnv on another cluster than the package's (a test that
// makes a node NotReady keeps it from the others).
func newEnvOn(t *testing.T, c *localcluster.Cluster) *env {
	t.Helper()
	kc, err := c.UserKubeconfig("upshift-serve", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, cs: cs, kubeconfig: kc, bin: testenv.UpshiftBinary(t),
		runsNS:   "runs-" + strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name(), "-")),
		stateDir: t.TempDir(), passDir: t.TempDir()}
	write(t, filepath.Join(e.passDir, "admin"), adminPassword+"\n")
	write(t, filepath.Join(e.passDir, "viewer"), viewerPassword)
	return e
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// server is a running `upshift serve`.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	client *http.Client
	// cert is the server's certificate (PEM), for a browser to trust.
	cert []byte
	log  *testenv.SyncBuffer
	done chan struct{}
}

var servingLine = regexp.MustCompile(`^serving (https://\S+) \(certificate (\S+)\)`)

// serve starts the server with the env's passwords, namespace and state
// directory, and the given flags; it returns once it answers.
func (e *env) serve(args ...string) *server {
	e.t.Helper()
	return e.serveEnv(nil, args...)
}

// serveEnv is serve with more environment (a failpoint).
func (e *env) serveEnv(extraEnv []string, args ...string) *server {
	e.t.Helper()
	all := append(append([]string{"serve", "--listen", "127.0.0.1:0", "--state-dir", e.stateDir, "--runs-namespace", e.runsNS},
		e.passwordFlags()...), args...)
	cmd := exec.Command(e.bin, all...)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="+e.kubeconfig), extraEnv...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	s := &server{t: e.t, cmd: cmd, log: &testenv.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = s.log
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(s.done) }()
	e.t.Cleanup(func() { s.kill() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		m := servingLine.FindStringSubmatch(line)
		if !ok || m == nil {
			e.t.Fatalf("upshift serve did not say where it serves (%q):\n%s", line, s.log)
		}
		s.url = m[1]
		pem, err := os.ReadFile(m[2])
		if err != nil {
			e.t.Fatal(err)
		}
		s.cert = pem
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			e.t.Fatalf("%s holds no certificate", m[2])
		}
		s.client = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	case <-time.After(2 * time.Minute):
		e.t.Fatalf("upshift serve did not start:\n%s", s.log)
	}
	return s
}

// passwordFlags say where the server reads its passwords.
func (e *env) passwordFlags() []string {
	if e.passwordSecret != "" {
		return []string{"--password-secret", e.passwordSecret}
	}
	return []string{"--password-file", filepath.Join(e.passDir, "admin"), "--viewer-password-file", filepath.Join(e.passDir, "viewer")}
}

// kill ends the server with SIGKILL, as a crash would.
func (s *server) kill() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-s.done
}

// call sends a request with a JSON body (nil: none) and returns the code
// and body.
func (s *server) call(method, path, token string, body any) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v\nserver log:\n%s", method, path, err, s.log)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// must calls and decodes into out, failing unless the code is want.
func (s *server) must(want int, method, path, token string, body, out any) {
	s.t.Helper()
	code, b := s.call(method, path, token, body)
	if code != want {
		s.t.Fatalf("%s %s = %d, want %d: %s\nserver log:\n%s", method, path, code, want, b, s.log)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

func (s *server) login(password string) string {
	s.t.Helper()
	var out struct {
		Token string `json:"token"`
	}
	s.must(http.StatusOK, "POST", "/api/auth/login", "", map[string]string{"password": password}, &out)
	return out.Token
}

// apiError is the API's error body.
type apiError struct {
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Field      string `json:"field"`
}

// status is the shape of infra and app status.
type progress struct {
	Components []struct {
		Name   string `json:"name"`
		Status struct {
			State       string `json:"state"`
			Description string `json:"description"`
		} `json:"status"`
	} `json:"components"`
	Logs   string `json:"logs"`
	Status struct {
		State       string `json:"state"`
		Description string `json:"description"`
		LastUpdated string `json:"lastUpdated"`
	} `json:"status"`
	Runs       []string   `json:"runs"`
	NextWindow *time.Time `json:"nextWindow"`
	Waiting    *struct {
		Run  string `json:"run"`
		Step string `json:"step"`
	} `json:"waiting"`
	SupportBundle *struct {
		Name  string `json:"name"`
		Bytes int    `json:"bytes"`
		Files int    `json:"files"`
		Error string `json:"error"`
		URL   string `json:"url"`
	} `json:"supportBundle"`
}

// waitFor polls path until cond holds on its progress.
func (s *server) waitFor(path, token, what string, cond func(progress) bool) progress {
	s.t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	var p progress
	for time.Now().Before(deadline) {
		s.must(http.StatusOK, "GET", path, token, nil, &p)
		if cond(p) {
			return p
		}
		time.Sleep(300 * time.Millisecond)
	}
	s.t.Fatalf("%s: %s never happened; last: %+v\nserver log:\n%s", path, what, p, s.log)
	return p
}

var metaGet = metav1.GetOptions{}

// runBinary runs upshift to its end and returns its combined output; a
// command that never ends (a server that should have refused to start)
// is killed at the test's deadline.
func runBinary(e *env, args ...string) (string, error) {
	cmd := exec.CommandContext(e.ctx, e.bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// testenvCluster is the package's shared cluster.
func testenvCluster(t *testing.T) *localcluster.Cluster { return testenv.Cluster(t) }

// startWaiting starts the infrastructure upgrade to 1.1.0 with its hop
// waiting for an approval, and returns the status once it waits.
func (s *server) startWaiting(token string) progress {
	s.t.Helper()
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/infra/upgrade", token,
		map[string]any{"targetVersion": "1.1.0", "values": map[string]string{"approve": "true"}}, nil)
	return s.waitFor("/api/linux/upgrade/infra/status", token, "the approval", func(p progress) bool { return p.Waiting != nil })
}
