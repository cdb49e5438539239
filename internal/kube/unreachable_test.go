package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUnreachable(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &netSyscallError{syscall.ECONNREFUSED}}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused", refused, true},
		{"connection refused, wrapped", fmt.Errorf("apply deployment shop/web: %w", refused), true},
		{"dial timeout", &url.Error{Op: "Get", URL: "https://127.0.0.1:6443", Err: &net.OpError{Op: "dial", Net: "tcp", Err: timeoutError{}}}, true},
		{"flattened by a library", errors.New("upgrade failed: Get \"https://127.0.0.1:6443/api\": dial tcp 127.0.0.1:6443: connect: connection refused"), true},
		{"client timeout", fmt.Errorf("get: %w (Client.Timeout exceeded while awaiting headers)", context.DeadlineExceeded), true},

		// The server answered: these fail the step.
		{"webhook denies", apierrors.NewForbidden(gr, "web", errors.New(`admission webhook "deny.test" denied the request`)), false},
		{"500 for one resource", apierrors.NewInternalError(errors.New("boom")), false},
		{"webhook unreachable, quoted in a 500", apierrors.NewInternalError(errors.New(`failed calling webhook "deny.test": Post "https://127.0.0.1:1/validate": dial tcp 127.0.0.1:1: connect: connection refused`)), false},
		{"throttled past the retries", apierrors.NewTooManyRequests("slow down", 1), false},
		{"503 answered", apierrors.NewServiceUnavailable("etcd"), false},
		{"504 answered", apierrors.NewTimeoutError("etcd slow", 1), false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Deployment"}, "web", nil), false},
		{"step deadline", fmt.Errorf("apply: %w", context.DeadlineExceeded), false},
		{"interrupted", fmt.Errorf("apply: %w", context.Canceled), false},
		{"malformed object", errors.New("decode manifest: yaml: line 3: mapping values are not allowed"), false},
	}
	for _, tt := range tests {
		if got := Unreachable(tt.err); got != tt.want {
			t.Errorf("%s: Unreachable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// netSyscallError is what the net package wraps a syscall error in.
type netSyscallError struct{ errno syscall.Errno }

func (e *netSyscallError) Error() string { return "connect: " + e.errno.Error() }
func (e *netSyscallError) Unwrap() error { return e.errno }
