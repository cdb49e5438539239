package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

var (
	errBlip  = errors.New("blip")
	errFinal = errors.New("final")
)

func isBlip(err error) bool { return errors.Is(err, errBlip) }

// tiny is a backoff short enough for a unit test.
var tiny = wait.Backoff{Duration: time.Millisecond, Steps: 5}

func TestRetrySucceedsAfterBlips(t *testing.T) {
	var attempts []int
	err := Retry(context.Background(), tiny, isBlip, func(attempt int) error {
		attempts = append(attempts, attempt)
		if attempt < 3 {
			return errBlip
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Retry = %v, want nil", err)
	}
	if len(attempts) != 3 || attempts[0] != 1 || attempts[2] != 3 {
		t.Fatalf("attempts = %v, want [1 2 3]", attempts)
	}
}

func TestRetryStopsOnAnAnswer(t *testing.T) {
	calls := 0
	err := Retry(context.Background(), tiny, isBlip, func(int) error {
		calls++
		return errFinal
	})
	if err != errFinal || calls != 1 {
		t.Fatalf("Retry = %v after %d calls, want %v after 1", err, calls, errFinal)
	}
}

// TestRetrySpent: the last error comes back as it is. The cap ends the
// backoff as wait.ExponentialBackoff does; the capped rows are the shapes
// of runstore's and chunks' backoff (Steps 6, Cap 15 steps of Duration) and
// backup's (Steps 7, Cap 25), scaled from 200ms to 1ms.
func TestRetrySpent(t *testing.T) {
	tests := []struct {
		name  string
		b     wait.Backoff
		calls int
	}{
		{"steps", wait.Backoff{Duration: time.Millisecond, Steps: 3}, 3},
		{"one step", wait.Backoff{Duration: time.Millisecond, Steps: 1}, 1},
		{"no steps", wait.Backoff{Duration: time.Millisecond}, 1},
		{"cap 15", wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 6, Cap: 15 * time.Millisecond}, 4},
		{"cap 25", wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 7, Cap: 25 * time.Millisecond}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var last error
			calls := 0
			err := Retry(context.Background(), tt.b, isBlip, func(attempt int) error {
				calls++
				last = &blipError{attempt}
				return last
			})
			if err != last || calls != tt.calls {
				t.Fatalf("Retry = %v after %d calls, want the last error after %d", err, calls, tt.calls)
			}
		})
	}
}

type blipError struct{ attempt int }

func (e *blipError) Error() string { return "blip" }
func (e *blipError) Unwrap() error { return errBlip }

// TestRetryCutOff: ctx ends during the wait. The error must match the cause
// and context.Canceled (callers test either) and name the last error.
func TestRetryCutOff(t *testing.T) {
	lost := errors.New("lease lost")
	ctx, cancel := context.WithCancelCause(context.Background())
	slow := wait.Backoff{Duration: time.Hour, Steps: 5} // only ctx can end the wait
	calls := 0
	err := Retry(ctx, slow, isBlip, func(int) error {
		calls++
		cancel(lost)
		return errBlip
	})
	if calls != 1 {
		t.Fatalf("%d calls, want 1", calls)
	}
	if !errors.Is(err, lost) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Retry = %v, want it to match %v and context.Canceled", err, lost)
	}
	if !strings.Contains(err.Error(), "last error: blip") || !strings.HasPrefix(err.Error(), "lease lost") {
		t.Fatalf("Retry = %q, want the cause and the last error", err)
	}
}

// TestRetryCutOffByItsOwnError: a caller that retries ctx errors (the
// Applier) gets the call's own error back when it already says ctx ended.
func TestRetryCutOffByItsOwnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	slow := wait.Backoff{Duration: time.Hour, Steps: 5}
	var last error
	err := Retry(ctx, slow, func(error) bool { return true }, func(int) error {
		cancel()
		last = fmt.Errorf("get: %w", ctx.Err())
		return last
	})
	if err != last {
		t.Fatalf("Retry = %v, want the call's own error %v", err, last)
	}
}
