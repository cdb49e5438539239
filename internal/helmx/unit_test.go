package helmx

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// These tests need no cluster and run with -short.

func TestRedactf(t *testing.T) {
	type status string
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.web.v1"}, Data: map[string][]byte{"release": []byte("s3cret")}}
	tests := []struct {
		format string
		args   []any
		want   string
	}{
		{"rolling back %s (current: v%d, target: v%d)", []any{"web", 3, 2}, "rolling back web (current: v3, target: v2)"},
		{"list: failed to decode release: %v: %s", []any{secret, errors.New("bad gzip")},
			"list: failed to decode release: <redacted *v1.Secret>: bad gzip"},
		{"values %v", []any{map[string]any{"password": "s3cret"}}, "values <redacted map[string]interface {}>"},
		{"event %s after %v", []any{status("MODIFIED"), 2 * time.Second}, "event MODIFIED after 2s"},
		{"errs: %s", []any{[]error{errors.New("a"), errors.New("b")}}, "errs: a\nb"},
		{"Created a new %s called %q in %s\n", []any{"Deployment", "web", "ns"}, `Created a new Deployment called "web" in ns`},
	}
	for _, tt := range tests {
		got := redactf(tt.format, tt.args...)
		if got != tt.want {
			t.Errorf("redactf(%q) = %q, want %q", tt.format, got, tt.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("redactf(%q) leaked a value: %q", tt.format, got)
		}
	}
}

func TestEffectiveTimeout(t *testing.T) {
	bg := context.Background()
	if d, err := effectiveTimeout(bg, 0); err != nil || d != DefaultTimeout {
		t.Errorf("no timeout: %s, %v; want %s", d, err, DefaultTimeout)
	}
	if d, err := effectiveTimeout(bg, 8*time.Second); err != nil || d != 8*time.Second {
		t.Errorf("8s: %s, %v", d, err)
	}
	ctx, cancel := context.WithTimeout(bg, time.Second)
	defer cancel()
	if d, err := effectiveTimeout(ctx, time.Minute); err != nil || d > time.Second || d <= 0 {
		t.Errorf("ctx deadline 1s, timeout 1m: %s, %v; want <= 1s", d, err)
	}
	done, cancel2 := context.WithCancel(bg)
	cancel2()
	if _, err := effectiveTimeout(done, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: err = %v", err)
	}
}

func TestLoad(t *testing.T) {
	ch, err := Load("testdata/chart")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if ch.Name() != "helmx-test" || ch.Metadata.Version != "0.1.0" || len(ch.Templates) != 2 {
		t.Fatalf("chart = %s %s with %d templates", ch.Name(), ch.Metadata.Version, len(ch.Templates))
	}
	if _, err := Load("testdata/no-such-chart"); err == nil || !strings.Contains(err.Error(), "testdata/no-such-chart") {
		t.Fatalf("Load of a missing chart: err = %v", err)
	}
}
