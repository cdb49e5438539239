package pluginsdk

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// RequestIDKey is the gRPC metadata key of a mutation's request id. Upshift
// sends one with every call that starts an operation (ServiceOut,
// UpgradeMaster, …) and records it before the call, so that when the
// answer is lost (a timeout, a controller stopped before it saved it) it
// asks the plugin which operation the request started (Finder) instead of
// sending it again.
const RequestIDKey = "upshift-request-id"

type requestIDKey struct{}

// WithRequestID returns ctx carrying a mutation's request id: the client
// sends it as RequestIDKey; a plugin called in-process reads it with
// RequestID.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id of the mutation being served ("" when the
// caller sent none: a client that is not Upshift's). A plugin that
// implements Finder keeps, per cluster, the operation each request id
// started, and answers a mutation sent again with the same id with that
// operation rather than starting another.
func RequestID(ctx context.Context) string {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok {
		return id
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(RequestIDKey); len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// OutgoingRequestID adds ctx's request id (WithRequestID) to the metadata
// of the calls made with the returned context.
func OutgoingRequestID(ctx context.Context) context.Context {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok && id != "" {
		return metadata.AppendToOutgoingContext(ctx, RequestIDKey, id)
	}
	return ctx
}

// Finder is optional (upshift.ops.v1.Ops/FindOperation): the operation a
// mutation with the given request id started on the cluster, or an error
// wrapping ErrNoSuchRequest when no mutation with that id reached the
// plugin (then Upshift sends it again, with the same id).
type Finder interface {
	FindOperation(ctx context.Context, clusterID, requestID string) (Operation, error)
}

// ErrNoSuchRequest is a Finder's answer for a request id it never saw. On
// the wire it is NotFound.
var ErrNoSuchRequest = status.Error(codes.NotFound, "no operation was started with this request id")

// IsNoSuchRequest tells a FindOperation answer that no mutation with the
// request id reached the plugin.
func IsNoSuchRequest(err error) bool {
	return errors.Is(err, ErrNoSuchRequest) || status.Code(err) == codes.NotFound
}
