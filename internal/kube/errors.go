package kube

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Sentinels for errors.Is on what a wait returns.
var (
	// ErrFailing: the object is broken; waiting longer will not help.
	ErrFailing = errors.New("failing")
	// ErrNoMatch: a selector matched nothing. It is a kind of ErrFailing.
	ErrNoMatch = fmt.Errorf("nothing matches: %w", ErrFailing)
	// ErrTimeout: the time ran out before the object became Current.
	ErrTimeout = errors.New("timed out")
)

// NotReadyError ends a wait that did not reach Current. Reason is one of
// ErrFailing, ErrNoMatch or ErrTimeout; Health is the last verdict, whose
// message the error carries.
type NotReadyError struct {
	Reason  error
	Health  Health
	Timeout time.Duration // how long was waited, with ErrTimeout
}

func (e *NotReadyError) Error() string {
	if errors.Is(e.Reason, ErrTimeout) {
		return fmt.Sprintf("timed out after %s: %s", ShortDuration(e.Timeout), e.Health.Message)
	}
	return e.Health.Message
}

func (e *NotReadyError) Unwrap() error { return e.Reason }

// ShortDuration prints 2m rather than 2m0s, for messages.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// isPermanent tells API errors that no retry can cure (bad credentials,
// missing RBAC, a malformed request). Everything else — connection refused,
// 5xx, throttling, conflicts, expired watches, a kind not served yet — is
// retried: a blip of the API server must never look like a failed upgrade.
func isPermanent(err error) bool {
	return apierrors.IsUnauthorized(err) ||
		apierrors.IsForbidden(err) ||
		apierrors.IsBadRequest(err) ||
		apierrors.IsInvalid(err) ||
		apierrors.IsMethodNotSupported(err) ||
		apierrors.IsNotAcceptable(err) ||
		apierrors.IsUnsupportedMediaType(err)
}

// isRoutine tells watch errors that are part of normal operation and say
// nothing worth reporting.
func isRoutine(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}
