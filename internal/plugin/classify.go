package plugin

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Class is what a failed call says about the plugin and the cluster it
// named.
type Class int

const (
	// Down: the plugin did not answer (unreachable, refused the
	// connection or its TLS, no answer in time, Unavailable, overloaded
	// after the retries, or the caller gave up). Nothing is known about
	// the cluster: the rollout waits where it is.
	Down Class = iota
	// ClusterAnswer: the plugin answered with an error about the cluster
	// the call named: NotFound, InvalidArgument, FailedPrecondition,
	// OutOfRange, AlreadyExists, Aborted, PermissionDenied (its
	// credentials may reach some clusters and not others), Internal,
	// Unknown, DataLoss, or an error without a gRPC status (a plugin in
	// this process). The cluster is marked; the others go on.
	ClusterAnswer
	// PluginAnswer: the plugin answered with an error no cluster can
	// avoid: Unauthenticated (Upshift's credentials) or Unimplemented (a
	// plugin.Cluster method it lacks). Like Down, the rollout waits.
	PluginAnswer
)

// Classify says what a call's non-nil error says.
func Classify(err error) Class {
	if errors.Is(err, ErrPluginDown) {
		return Down
	}
	s, ok := status.FromError(err)
	if !ok {
		return ClusterAnswer
	}
	switch s.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Canceled:
		return Down
	case codes.Unauthenticated, codes.Unimplemented:
		return PluginAnswer
	}
	return ClusterAnswer
}

// Answer is the plugin's answer in err: its gRPC code and message
// ("NotFound: no cluster c7"), or the error's text when it has no gRPC
// status.
func Answer(err error) string {
	// The status itself: status.FromError of a wrapped error gives the
	// whole chain's text as its message.
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		s := se.GRPCStatus()
		return fmt.Sprintf("%s: %s", s.Code(), s.Message())
	}
	return err.Error()
}
