package pluginsdk

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// grpcError is what a plugin's error becomes on the wire. An error that
// carries a gRPC status (status.Error, or one wrapping it) keeps its code,
// so a plugin can answer NotFound or FailedPrecondition; a context's end
// is DeadlineExceeded or Canceled; anything else is Unknown with the
// error's text.
func grpcError(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok {
		return s.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Unknown, err.Error())
}
