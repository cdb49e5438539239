package airgap

import (
	"net/http"
	"strings"
	"testing"
)

// No request leaves over plain http: the registry's own go over https,
// any other host's are refused before a packet is sent.
func TestHTTPSOnlyRefusesPlainHTTPElsewhere(t *testing.T) {
	sent := 0
	rt := httpsOnly{host: "registry.example:5000", next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		if r.URL.Scheme != "https" {
			t.Errorf("sent %s", r.URL)
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})}
	own, _ := http.NewRequest("GET", "http://registry.example:5000/v2/", nil)
	if _, err := rt.RoundTrip(own); err != nil {
		t.Fatal(err)
	}
	other, _ := http.NewRequest("GET", "http://auth.example/token", nil)
	if _, err := rt.RoundTrip(other); err == nil || !strings.Contains(err.Error(), "refused plain http to auth.example") {
		t.Errorf("plain http to the token service: %v", err)
	}
	if sent != 1 {
		t.Errorf("%d requests sent, want the registry's only", sent)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
