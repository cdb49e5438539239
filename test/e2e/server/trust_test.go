package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTokensEndWhenTheySay: a token issued before the password file
// changes is refused from then on, and so is one issued before
// `serve --rotate-key`; an events stream ends at its token's expiry,
// with an expired event, while its run still waits.
func TestTokensEndWhenTheySay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	before := s.login(adminPassword)
	p := s.startWaiting(before)
	run := p.Waiting.Run

	// The password file changes while the server runs.
	const newPassword = "admin-password-2"
	write(t, filepath.Join(e.passDir, "admin"), newPassword+"\n")
	if code, b := s.call("GET", "/api/runs", before, nil); code != http.StatusUnauthorized {
		t.Errorf("a token issued before the password changed = %d %s, want 401", code, b)
	}
	if code, _ := s.call("POST", "/api/auth/login", "", map[string]string{"password": adminPassword}); code != http.StatusUnauthorized {
		t.Errorf("a login with the old password = %d, want 401", code)
	}
	after := s.login(newPassword)
	s.must(http.StatusOK, "GET", "/api/runs", after, nil, nil)

	// The key is rotated at a restart; tokens live 4 s from then on.
	s.kill()
	s = e.serve("--catalog", catalog, "--rotate-key", "--token-ttl", "4s")
	if code, b := s.call("GET", "/api/runs", after, nil); code != http.StatusUnauthorized {
		t.Errorf("a token issued before --rotate-key = %d %s, want 401", code, b)
	}
	short := s.login(newPassword)
	issued := time.Now()
	kinds, ended := readStream(t, s, run, short)
	select {
	case <-ended:
	case <-time.After(15 * time.Second):
		t.Fatalf("the events stream was still open %s after its token was issued for 4 s; events: %v", time.Since(issued).Round(time.Second), kinds())
	}
	if got := kinds(); len(got) < 2 || got[0] != "transition" || got[len(got)-1] != "expired" {
		t.Errorf("events %v: want the run's transition first and expired last", got)
	}
	if took := time.Since(issued); took < 3*time.Second {
		t.Errorf("the stream ended %s after its token was issued for 4 s", took)
	}
	if code, _ := s.call("GET", "/api/runs", short, nil); code != http.StatusUnauthorized {
		t.Errorf("an expired token = %d, want 401", code)
	}
}

// readStream opens a run's events stream and records the kinds of its
// events; ended closes when the server ends it.
func readStream(t *testing.T, s *server, run, token string) (kinds func() []string, ended <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/api/runs/"+run+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	client := *s.client
	client.Timeout = 0
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("events of %s: %d", run, resp.StatusCode)
	}
	done := make(chan struct{})
	var mu sync.Mutex
	var seen []string
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if k, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				mu.Lock()
				seen = append(seen, k)
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}, done
}

// TestFailedLoginsAreBoundedAcrossAddresses: one failed login from each
// of 40 loopback addresses (127.0.0.2 on: the server sees each as a new
// client, as it would a guesser cycling IPv6 addresses) is slowed once
// the budget across all addresses is spent; the right password logs in
// again a few seconds later.
func TestFailedLoginsAreBoundedAcrossAddresses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	limited := 0
	var last apiError
	for i := range 40 {
		code, body := loginFrom(t, s, fmt.Sprintf("127.0.0.%d", i+2), "guess-"+fmt.Sprint(i))
		switch code {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			limited++
			_ = json.Unmarshal(body, &last)
		default:
			t.Fatalf("a failed login = %d %s", code, body)
		}
	}
	if limited < 5 || !strings.Contains(last.Message, "all addresses") {
		t.Fatalf("%d of 40 failed logins from distinct addresses were limited (last: %q), want the ones past the budget across addresses", limited, last.Message)
	}
	time.Sleep(3 * time.Second)
	if code, body := loginFrom(t, s, "127.0.0.100", adminPassword); code != http.StatusOK {
		t.Errorf("the right password, once the budget refilled = %d %s", code, body)
	}
}

// loginFrom logs in over a connection from the given loopback address.
func loginFrom(t *testing.T, s *server, from, password string) (int, []byte) {
	t.Helper()
	tr := s.client.Transport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	body, _ := json.Marshal(map[string]string{"password": password})
	resp, err := client.Post(s.url+"/api/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}

// TestServerRefusesHTTPSourcesUnlessAllowed: a plan preview whose source
// is plain http:// answers 400 naming the field, the source unasked;
// the server's --allow-http-sources lets it be read.
func TestServerRefusesHTTPSourcesUnlessAllowed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	var asked atomic.Int32
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		fmt.Fprintf(w, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-http, namespace: %s}\n", ns)
	})) // 127.0.0.1
	t.Cleanup(src.Close)
	plan := map[string]any{"apiVersion": "upshift.dev/v1alpha1", "kind": "UpgradePlan", "metadata": map[string]any{"name": "over-http"},
		"spec": map[string]any{"version": "1.0.0", "stages": []any{map[string]any{"name": "only", "steps": []any{
			map[string]any{"name": "cm", "manifests": map[string]any{"url": src.URL + "/cm.yaml"}}}}}}}

	s := e.serve("--catalog", catalog)
	code, body := s.call("POST", "/api/plans/preview", s.login(adminPassword), plan)
	if want := "spec.stages[0].steps[0].manifests.url: http:// is refused"; code != http.StatusBadRequest || !strings.Contains(string(body), want) || asked.Load() != 0 {
		t.Errorf("preview of an http:// source = %d %s (asked %d times), want 400 saying %q", code, body, asked.Load(), want)
	}
	s.kill()
	s = e.serve("--catalog", catalog, "--allow-http-sources")
	if code, body := s.call("POST", "/api/plans/preview", s.login(adminPassword), plan); code != http.StatusOK || asked.Load() == 0 {
		t.Errorf("with --allow-http-sources: preview = %d %s, want 200 with the source read", code, body)
	}
}
