package http

import (
	"context"
	"errors"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/step"
)

// flipping answers 503 to its first n requests, then okStatus. It counts
// requests. httptest listens on 127.0.0.1.
func flipping(t *testing.T, n int32, okStatus int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, _ *nethttp.Request) {
		if calls.Add(1) <= n {
			w.WriteHeader(nethttp.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(okStatus)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		failFirst   int32
		okStatus    int
		spec        func(url string) v1alpha1.HTTPGate
		gateTimeout time.Duration
		want        step.Status
		wantCalls   int32 // exact when > 0
		substr      []string
		maxTime     time.Duration
	}{
		{
			name: "flips to 200 after 3 calls", failFirst: 3, okStatus: 200,
			spec: func(u string) v1alpha1.HTTPGate {
				return v1alpha1.HTTPGate{URL: u, Interval: dur(50 * time.Millisecond)}
			},
			gateTimeout: 10 * time.Second,
			want:        step.Succeeded, wantCalls: 4, substr: []string{"answered 200", "attempt 4"},
		},
		{
			name: "stays 503 until the gate timeout", failFirst: 1 << 30, okStatus: 200,
			spec: func(u string) v1alpha1.HTTPGate {
				return v1alpha1.HTTPGate{URL: u, Interval: dur(100 * time.Millisecond)}
			},
			gateTimeout: time.Second,
			want:        step.Failed, substr: []string{"did not answer 200 within 1s", "last answer: 503 Service Unavailable"},
			maxTime: 3 * time.Second,
		},
		{
			name: "the gate's own timeout overrides", failFirst: 1 << 30, okStatus: 200,
			spec: func(u string) v1alpha1.HTTPGate {
				return v1alpha1.HTTPGate{URL: u, Interval: dur(100 * time.Millisecond), Timeout: dur(500 * time.Millisecond)}
			},
			gateTimeout: time.Minute,
			want:        step.Failed, substr: []string{"within 500ms", "503"},
			maxTime: 3 * time.Second,
		},
		{
			name: "expectStatus other than 200", failFirst: 1, okStatus: 204,
			spec: func(u string) v1alpha1.HTTPGate {
				return v1alpha1.HTTPGate{URL: u, ExpectStatus: 204, Interval: dur(50 * time.Millisecond)}
			},
			gateTimeout: 10 * time.Second,
			want:        step.Succeeded, wantCalls: 2, substr: []string{"answered 204"},
		},
		{
			name: "200 is not 204", failFirst: 0, okStatus: 200,
			spec: func(u string) v1alpha1.HTTPGate {
				return v1alpha1.HTTPGate{URL: u, ExpectStatus: 204, Interval: dur(50 * time.Millisecond)}
			},
			gateTimeout: 300 * time.Millisecond,
			want:        step.Failed, substr: []string{"last answer: 200 OK"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, calls := flipping(t, tt.failFirst, tt.okStatus)
			g, err := New(tt.spec(srv.URL+"/healthz"), tt.gateTimeout, egress.Policy{})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := g.Check(context.Background())
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if res.Status != tt.want {
				t.Fatalf("Check = %+v, want %s", res, tt.want)
			}
			for _, s := range tt.substr {
				if !strings.Contains(res.Message, s) {
					t.Errorf("message %q does not contain %q", res.Message, s)
				}
			}
			if tt.wantCalls > 0 && calls.Load() != tt.wantCalls {
				t.Errorf("server got %d requests, want %d", calls.Load(), tt.wantCalls)
			}
			if tt.maxTime > 0 && time.Since(start) > tt.maxTime {
				t.Errorf("Check took %s, want < %s", time.Since(start), tt.maxTime)
			}
		})
	}
}

func TestCheckConnectionRefusedNamesTheError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(nethttp.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	g, err := New(v1alpha1.HTTPGate{URL: url, Interval: dur(50 * time.Millisecond)}, 300*time.Millisecond, egress.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != step.Failed || !strings.Contains(res.Message, "connection refused") {
		t.Errorf("Check = %+v, want Failed naming connection refused", res)
	}
}

func TestCheckCallerCancel(t *testing.T) {
	t.Parallel()
	srv, _ := flipping(t, 1<<30, 200)
	g, err := New(v1alpha1.HTTPGate{URL: srv.URL}, time.Minute, egress.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := g.Check(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Check after the caller's context ended = %v, want its error", err)
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080/healthz", "ftp://127.0.0.1/x", "http://"} {
		if _, err := New(v1alpha1.HTTPGate{URL: u}, time.Minute, egress.Policy{}); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("New(%q) = %v, want ErrInvalidSpec", u, err)
		}
	}
}
