package plugin

import (
	"context"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	pluginpb "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
)

var _ pluginsdk.Cluster = (*Client)(nil)

// HealthCheck calls plugin.Cluster/HealthCheck.
func (c *Client) HealthCheck(ctx context.Context) error {
	return c.read(ctx, reqHealthCheck, "HealthCheck", func(ctx context.Context) error {
		_, err := c.cluster.HealthCheck(ctx, &emptypb.Empty{})
		return err
	})
}

// GetVersion calls plugin.Cluster/GetVersion.
func (c *Client) GetVersion(ctx context.Context, clusterID string) (pluginsdk.ClusterVersion, error) {
	var v *pluginpb.ClusterVersion
	err := c.read(ctx, reqGetVersion, "GetVersion", func(ctx context.Context) (err error) {
		v, err = c.cluster.GetVersion(ctx, &pluginpb.GetVersionRequest{ClusterID: clusterID})
		return err
	})
	if err != nil {
		return pluginsdk.ClusterVersion{}, err
	}
	return pluginsdk.ClusterVersionFromWire(v), nil
}

// GetClusterStatus calls plugin.Cluster/GetClusterStatus.
func (c *Client) GetClusterStatus(ctx context.Context, clusterID string) (pluginsdk.ClusterStatus, error) {
	var st *pluginpb.ClusterStatus
	err := c.read(ctx, reqGetClusterStatus, "GetClusterStatus", func(ctx context.Context) (err error) {
		st, err = c.cluster.GetClusterStatus(ctx, &pluginpb.GetClusterStatusRequest{ClusterID: clusterID})
		return err
	})
	if err != nil {
		return pluginsdk.ClusterStatus{}, err
	}
	return pluginsdk.ClusterStatusFromWire(st), nil
}

// GetOperationStatus calls plugin.Cluster/GetOperationStatus.
func (c *Client) GetOperationStatus(ctx context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
	var st *pluginpb.OperationStatus
	err := c.read(ctx, reqGetOperationStatus, "GetOperationStatus", func(ctx context.Context) (err error) {
		st, err = c.cluster.GetOperationStatus(ctx, &pluginpb.GetOperationStatusRequest{ClusterID: clusterID, OperationID: op.ID, Type: op.Type})
		return err
	})
	if err != nil {
		return pluginsdk.OperationUnknown, err
	}
	return pluginsdk.OperationStatus(st.GetStatus()), nil
}

// ServiceIn calls plugin.Cluster/ServiceIn, once.
func (c *Client) ServiceIn(ctx context.Context, clusterID string) (pluginsdk.Operation, error) {
	return c.startOperation(ctx, reqServiceIn, "ServiceIn", func(ctx context.Context) (*pluginpb.Operation, error) {
		return c.cluster.ServiceIn(ctx, &pluginpb.ServiceInRequest{ClusterID: clusterID})
	})
}

// ServiceOut calls plugin.Cluster/ServiceOut, once.
func (c *Client) ServiceOut(ctx context.Context, clusterID string) (pluginsdk.Operation, error) {
	return c.startOperation(ctx, reqServiceOut, "ServiceOut", func(ctx context.Context) (*pluginpb.Operation, error) {
		return c.cluster.ServiceOut(ctx, &pluginpb.ServiceOutRequest{ClusterID: clusterID})
	})
}

// UpgradeMaster calls plugin.Cluster/UpgradeMaster, once.
func (c *Client) UpgradeMaster(ctx context.Context, clusterID, version string) (pluginsdk.Operation, error) {
	return c.startOperation(ctx, reqUpgradeMaster, "UpgradeMaster", func(ctx context.Context) (*pluginpb.Operation, error) {
		return c.cluster.UpgradeMaster(ctx, &pluginpb.MasterVersion{ClusterID: clusterID, Version: version})
	})
}

// UpgradeNodePool calls plugin.Cluster/UpgradeNodePool, once.
func (c *Client) UpgradeNodePool(ctx context.Context, clusterID, nodePoolID, version string) (pluginsdk.Operation, error) {
	return c.startOperation(ctx, reqUpgradeNodePool, "UpgradeNodePool", func(ctx context.Context) (*pluginpb.Operation, error) {
		return c.cluster.UpgradeNodePool(ctx, &pluginpb.NodePoolVersion{ClusterID: clusterID, NodePoolID: nodePoolID, Version: version})
	})
}

// startOperation makes a mutating call (see mutate) and returns the
// operation it started.
func (c *Client) startOperation(ctx context.Context, requestType, method string, call func(context.Context) (*pluginpb.Operation, error)) (pluginsdk.Operation, error) {
	var op *pluginpb.Operation
	ctx = pluginsdk.OutgoingRequestID(ctx) // pluginsdk.WithRequestID: FindOperation finds it
	err := c.mutate(ctx, requestType, method, func(ctx context.Context) (err error) {
		op, err = call(ctx)
		return err
	})
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	return pluginsdk.OperationFromWire(op), nil
}
