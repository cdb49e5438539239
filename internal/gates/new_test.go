package gates

import (
	"context"
	"errors"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/gates/envkept"
	"github.com/upshift-dev/upshift/internal/gates/ready"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestNew(t *testing.T) {
	d := &clients.Set{}
	readyGate := &v1alpha1.ReadyGate{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web"}
	httpGate := &v1alpha1.HTTPGate{URL: "http://127.0.0.1:1/healthz"}
	envKept := &v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: "demo", Name: "web", Container: "app"}
	for _, tt := range []struct {
		name string
		g    v1alpha1.Gate
		err  error
	}{
		{"no kind", v1alpha1.Gate{}, ErrInvalidGate},
		{"two kinds", v1alpha1.Gate{Ready: readyGate, HTTP: httpGate}, ErrInvalidGate},
		{"ready", v1alpha1.Gate{Ready: readyGate}, nil},
		{"http", v1alpha1.Gate{HTTP: httpGate}, nil},
		{"bad ready", v1alpha1.Gate{Ready: &v1alpha1.ReadyGate{Kind: "Deployment"}}, ready.ErrInvalidSpec},
		{"envKept without the stage's backup", v1alpha1.Gate{EnvKept: envKept}, envkept.ErrNoBackup},
		{"envKept without a container", v1alpha1.Gate{EnvKept: &v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: "demo", Name: "web"}}, envkept.ErrInvalidSpec},
		{"envKept and ready", v1alpha1.Gate{EnvKept: envKept, Ready: readyGate}, ErrInvalidGate},
	} {
		g, err := New(tt.g, 0, d, nil)
		if !errors.Is(err, tt.err) || (err == nil) != (g != nil) {
			t.Errorf("%s: New = %v, %v; want error %v", tt.name, g, err, tt.err)
		}
	}
	// With the stage's backup, an envKept gate is built; only it needs one.
	if g, err := New(v1alpha1.Gate{EnvKept: envKept}, 0, d, &backup.Snapshot{}); err != nil || g == nil {
		t.Errorf("envKept with a backup: New = %v, %v", g, err)
	}
	if !NeedsBefore(v1alpha1.Gate{EnvKept: envKept}) || NeedsBefore(v1alpha1.Gate{Ready: readyGate}) {
		t.Error("NeedsBefore: only an envKept gate reads the stage's backup")
	}
}

// The plan's gate timeout reaches the http gate, and defaults to 2m.
func TestNewPassesTheGateTimeout(t *testing.T) {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, _ *nethttp.Request) {
		w.WriteHeader(nethttp.StatusServiceUnavailable)
	}))
	defer srv.Close()
	g, err := New(v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: srv.URL, Interval: &metav1.Duration{Duration: 100 * time.Millisecond}}}, 500*time.Millisecond, &clients.Set{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != step.Failed || !strings.Contains(res.Message, "within 500ms") {
		t.Errorf("Check = %+v, want Failed within 500ms", res)
	}
}
