package pluginsdk

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
)

// clusterServer serves a Cluster as plugin.Cluster.
type clusterServer struct {
	plugin.UnimplementedClusterServer
	impl Cluster
}

func (s *clusterServer) HealthCheck(ctx context.Context, _ *emptypb.Empty) (*emptypb.Empty, error) {
	if err := s.impl.HealthCheck(ctx); err != nil {
		return nil, grpcError(err)
	}
	return &emptypb.Empty{}, nil
}

func (s *clusterServer) GetVersion(ctx context.Context, r *plugin.GetVersionRequest) (*plugin.ClusterVersion, error) {
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	v, err := s.impl.GetVersion(ctx, r.GetClusterID())
	if err != nil {
		return nil, grpcError(err)
	}
	return WireClusterVersion(r.GetClusterID(), v), nil
}

func (s *clusterServer) GetClusterStatus(ctx context.Context, r *plugin.GetClusterStatusRequest) (*plugin.ClusterStatus, error) {
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	st, err := s.impl.GetClusterStatus(ctx, r.GetClusterID())
	if err != nil {
		return nil, grpcError(err)
	}
	return WireClusterStatus(st), nil
}

func (s *clusterServer) GetOperationStatus(ctx context.Context, r *plugin.GetOperationStatusRequest) (*plugin.OperationStatus, error) {
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	st, err := s.impl.GetOperationStatus(ctx, r.GetClusterID(), Operation{Type: r.GetType(), ID: r.GetOperationID()})
	if err != nil {
		return nil, grpcError(err)
	}
	return &plugin.OperationStatus{Status: plugin.OperationStatusType(st)}, nil
}

func (s *clusterServer) ServiceIn(ctx context.Context, r *plugin.ServiceInRequest) (*plugin.Operation, error) {
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	return wireOperation(s.impl.ServiceIn(ctx, r.GetClusterID()))
}

func (s *clusterServer) ServiceOut(ctx context.Context, r *plugin.ServiceOutRequest) (*plugin.Operation, error) {
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	return wireOperation(s.impl.ServiceOut(ctx, r.GetClusterID()))
}

func (s *clusterServer) UpgradeMaster(ctx context.Context, r *plugin.MasterVersion) (*plugin.Operation, error) {
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	return wireOperation(s.impl.UpgradeMaster(ctx, r.GetClusterID(), r.GetVersion()))
}

func (s *clusterServer) UpgradeNodePool(ctx context.Context, r *plugin.NodePoolVersion) (*plugin.Operation, error) {
	if err := requireClusterID(r.GetClusterID()); err != nil {
		return nil, err
	}
	return wireOperation(s.impl.UpgradeNodePool(ctx, r.GetClusterID(), r.GetNodePoolID(), r.GetVersion()))
}

func wireOperation(op Operation, err error) (*plugin.Operation, error) {
	if err != nil {
		return nil, grpcError(err)
	}
	return WireOperation(op), nil
}

// requireClusterID refuses a request without a cluster: proto3 sends an
// unset string as "", which no plugin should take for a cluster's name.
func requireClusterID(id string) error {
	if id == "" {
		return status.Error(codes.InvalidArgument, "clusterID is empty: name the cluster to act on")
	}
	return nil
}
