package egress

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Hosts are matched exactly or under a "*." suffix; no hosts: any.
func TestAllows(t *testing.T) {
	p := Policy{Hosts: []string{"prometheus.monitoring", "*.svc.cluster.local", "127.0.0.1"}}
	for url, want := range map[string]bool{
		"http://prometheus.monitoring:9090":           true,
		"http://Prometheus.Monitoring:9090/api":       true,
		"https://shop.team-a.svc.cluster.local/stats": true,
		"http://127.0.0.1:8080":                       true,
		"http://169.254.169.254/latest/meta-data":     false,
		"https://svc.cluster.local.evil.example":      false,
		"http://prometheus.monitoring.evil.example":   false,
	} {
		if got := p.Allows(url) == nil; got != want {
			t.Errorf("Allows(%s) = %v, want %v", url, got, want)
		}
	}
	if err := (Policy{}).Allows("http://anything.example"); err != nil {
		t.Errorf("no hosts: %v, want any allowed", err)
	}
}

// The transport refuses a host the policy does not allow before sending
// anything, refuses link-local addresses at the dial (no packet leaves:
// the dial is refused before it connects), and passes the rest.
func TestTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	open := Policy{}.Client(5 * time.Second)
	if resp, err := open.Get(srv.URL); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %v, want 200", srv.URL, err)
	}
	closed := Policy{Hosts: []string{"prometheus.monitoring"}}.Client(5 * time.Second)
	if _, err := closed.Get(srv.URL); err == nil || !strings.Contains(err.Error(), "not one this process lets a plan reach") {
		t.Errorf("GET of a host not allowed: %v, want refused", err)
	}
	if _, err := open.Get("http://169.254.169.254/latest/meta-data"); err == nil || !strings.Contains(err.Error(), "link-local") {
		t.Errorf("GET of the metadata address: %v, want refused as link-local", err)
	}
}
