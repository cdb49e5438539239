package pluginsdk

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
	opsv1 "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/upshift/ops/v1"
)

// opsServer serves the optional interfaces a Cluster implements as
// upshift.ops.v1.Ops; a method whose interface it lacks answers
// Unimplemented, which clients take for "not supported".
type opsServer struct {
	opsv1.UnimplementedOpsServer
	impl      Cluster
	describer Describer
	waiter    Waiter
	reverter  Reverter
	finder    Finder
	// stopping ends when Serve is asked to stop: waits then answer at
	// once, so the graceful stop does not wait out their timeouts.
	stopping context.Context
}

// newOpsServer is nil when impl implements none of the optional
// interfaces: the plugin then does not serve upshift.ops.v1 at all.
func newOpsServer(impl Cluster, stopping context.Context) *opsServer {
	s := &opsServer{impl: impl, stopping: stopping}
	s.describer, _ = impl.(Describer)
	s.waiter, _ = impl.(Waiter)
	s.reverter, _ = impl.(Reverter)
	s.finder, _ = impl.(Finder)
	if s.describer == nil && s.waiter == nil && s.reverter == nil && s.finder == nil {
		return nil
	}
	return s
}

func (s *opsServer) Capabilities(context.Context, *emptypb.Empty) (*opsv1.OpsCapabilities, error) {
	return &opsv1.OpsCapabilities{DescribeOperation: s.describer != nil, WaitOperation: s.waiter != nil, RevertCluster: s.reverter != nil, FindOperation: s.finder != nil}, nil
}

func (s *opsServer) DescribeOperation(ctx context.Context, r *opsv1.OperationRequest) (*opsv1.OperationReport, error) {
	if s.describer == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin does not describe operations (pluginsdk.Describer): use GetOperationStatus")
	}
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	rep, err := s.describer.DescribeOperation(ctx, r.GetClusterID(), OperationFromWire(r.GetOperation()))
	if err != nil {
		return nil, grpcError(err)
	}
	return WireOperationReport(rep), nil
}

func (s *opsServer) WaitOperation(ctx context.Context, r *opsv1.WaitOperationRequest) (*opsv1.OperationReport, error) {
	if s.waiter == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin does not wait for operations (pluginsdk.Waiter): poll GetOperationStatus")
	}
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	call := ctx
	wait, cancel := context.WithCancel(ctx)
	defer cancel()
	if t := r.GetTimeout(); t != nil {
		if err := t.CheckValid(); err != nil || t.AsDuration() < 0 {
			return nil, status.Errorf(codes.InvalidArgument, "timeout %v: give a positive duration, or none to wait until the call's deadline", t.AsDuration())
		}
		wait, cancel = context.WithTimeout(wait, t.AsDuration())
		defer cancel()
	}
	defer context.AfterFunc(s.stopping, cancel)()

	op := OperationFromWire(r.GetOperation())
	rep, err := s.waiter.WaitOperation(wait, r.GetClusterID(), op)
	if err != nil && wait.Err() != nil && call.Err() == nil && isContextError(err) {
		// The wait ended (timeout, or the plugin stopping) and the
		// implementation said so with an error instead of the report as it
		// stands: the caller still gets the status.
		st, serr := s.impl.GetOperationStatus(call, r.GetClusterID(), op)
		if serr != nil {
			return nil, grpcError(serr)
		}
		return &opsv1.OperationReport{Status: plugin.OperationStatusType(st)}, nil
	}
	if err != nil {
		return nil, grpcError(err)
	}
	return WireOperationReport(rep), nil
}

func (s *opsServer) RevertCluster(ctx context.Context, r *opsv1.RevertClusterRequest) (*plugin.Operation, error) {
	if s.reverter == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin does not revert clusters (pluginsdk.Reverter): revert with UpgradeNodePool, then UpgradeMaster")
	}
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	if r.GetTo().GetMaster().GetVersion() == "" {
		return nil, status.Error(codes.InvalidArgument, "to.master.version is empty: give the versions to revert to")
	}
	return wireOperation(s.reverter.RevertCluster(ctx, r.GetClusterID(), ClusterVersionFromWire(r.GetTo())))
}

func (s *opsServer) FindOperation(ctx context.Context, r *opsv1.FindOperationRequest) (*plugin.Operation, error) {
	if s.finder == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin does not find operations by request id (pluginsdk.Finder)")
	}
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	if r.GetRequestID() == "" {
		return nil, status.Error(codes.InvalidArgument, "requestID is empty: give the request id the mutation was sent with")
	}
	return wireOperation(s.finder.FindOperation(ctx, r.GetClusterID(), r.GetRequestID()))
}

func isContextError(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		status.Code(err) == codes.DeadlineExceeded || status.Code(err) == codes.Canceled
}
