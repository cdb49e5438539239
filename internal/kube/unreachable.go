package kube

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Unreachable tells an API server that could not be reached (connection
// refused or reset, a dial or TLS handshake that timed out, a connection
// cut mid-answer) from one that answered. The difference decides what a
// run does: an outage says nothing about the upgrade, so the run stops as
// saved and resumes later; an answer that refuses (a webhook that keeps
// denying, a 500 for one resource, throttling that outlasted the retries)
// is the step's failure, rolled back like any other.
//
// The rule is whether an HTTP status came back: any apierrors.APIStatus
// means the server answered. Only errors without one are looked at
// further, so a webhook's "connection refused" quoted inside a 500 is an
// answer, not an outage.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false
	}
	// The caller's own context ending is not the server's doing; a
	// deadline is the server's only when the HTTP client set it (a
	// context's deadline error also passes for a net.Error timeout).
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return clientTimeout(err)
	}
	var ne net.Error
	var opErr *net.OpError
	var recordErr tls.RecordHeaderError
	switch {
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return true
	case errors.As(err, &opErr), errors.As(err, &recordErr):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return unreachableText(err.Error())
}

// clientTimeout tells a deadline the HTTP client set (rest.Config.Timeout)
// from a step's own deadline, which also wraps context.DeadlineExceeded.
func clientTimeout(err error) bool {
	return strings.Contains(err.Error(), "Client.Timeout exceeded")
}

// unreachableText reads what some libraries leave of a network error once
// they flatten it into a string (Helm's kube client formats several of
// its errors with %s, dropping the chain errors.As needs). It is only
// asked about errors that carry no HTTP status.
func unreachableText(msg string) bool {
	for _, s := range []string{
		"connection refused",
		"connection reset by peer",
		"no route to host",
		"i/o timeout",
		"TLS handshake timeout",
		"http2: client connection lost",
		"Client.Timeout exceeded",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
