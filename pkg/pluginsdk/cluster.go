// Package pluginsdk is the Go SDK for ops plugins: the programs through
// which Upshift's fleet controller operates clusters (take one out of
// service, upgrade its control plane and node pools, put it back).
//
// A plugin implements Cluster, the multicluster upgrade operator's
// plugin.Cluster gRPC service as a Go interface, and serves it with Serve.
// On the wire it is that service unchanged (package plugin, the same rpcs,
// messages, enums and field numbers), so a plugin written for the
// multicluster upgrade operator works with Upshift, and one written with
// this SDK works with the operator. Upshift's own additions are a separate
// service, upshift.ops.v1.Ops, which a plugin serves when it implements
// the optional interfaces below (Describer, Waiter, Reverter) and Finder.
package pluginsdk

import "context"

// OperationStatus is where a plugin's operation is. The values are the
// wire enum's (plugin.OperationStatusType).
type OperationStatus int32

const (
	OperationUnknown OperationStatus = 0
	OperationRunning OperationStatus = 1
	OperationDone    OperationStatus = 2
	OperationFailed  OperationStatus = 3
)

// ServiceState tells whether a cluster is routed to. The values are the
// wire enum's (plugin.ClusterStatusType): its zero value is in service.
type ServiceState int32

const (
	ServiceIn  ServiceState = 0
	ServiceOut ServiceState = 1
)

// Operation is a plugin's handle on work it started: Type is free-form
// (the plugin names it; the operator's metrics label by it), ID is unique
// per cluster. The controller records both, so a restarted controller
// asks about the operation in flight instead of starting another.
type Operation struct {
	Type string
	ID   string
}

// NodePoolVersion is one node pool and the Kubernetes version it runs.
type NodePoolVersion struct {
	ID      string
	Version string
}

// ClusterVersion is what a cluster runs: its control plane ("master" on
// the wire) and each node pool.
type ClusterVersion struct {
	Master    string
	NodePools []NodePoolVersion
}

// ClusterStatus tells whether a cluster is routed to, and whether it could
// be (healthy enough to serve).
type ClusterStatus struct {
	Service   ServiceState
	Available bool
}

// Cluster is the multicluster upgrade operator's plugin.Cluster service.
// Every method is called with a deadline. A mutating call starts an
// operation and returns at once; the controller follows it with
// GetOperationStatus (or Waiter.WaitOperation).
type Cluster interface {
	// HealthCheck answers when the plugin can serve.
	HealthCheck(ctx context.Context) error
	GetVersion(ctx context.Context, clusterID string) (ClusterVersion, error)
	GetClusterStatus(ctx context.Context, clusterID string) (ClusterStatus, error)
	GetOperationStatus(ctx context.Context, clusterID string, op Operation) (OperationStatus, error)
	ServiceIn(ctx context.Context, clusterID string) (Operation, error)
	ServiceOut(ctx context.Context, clusterID string) (Operation, error)
	UpgradeMaster(ctx context.Context, clusterID, version string) (Operation, error)
	UpgradeNodePool(ctx context.Context, clusterID, nodePoolID, version string) (Operation, error)
}

// OperationReport is an operation's status with what the wire enum cannot
// say: why it failed, and how far it got (for a node pool, nodes drained
// and replaced of all).
type OperationReport struct {
	Status  OperationStatus
	Message string
	Done    int32
	Total   int32
}

// Describer is optional (upshift.ops.v1.Ops/DescribeOperation): the
// controller shows the message and progress in status and in the
// OperationFailed event.
type Describer interface {
	DescribeOperation(ctx context.Context, clusterID string, op Operation) (OperationReport, error)
}

// Waiter is optional (upshift.ops.v1.Ops/WaitOperation): it returns when
// the operation is no longer running, or when ctx ends (then with the
// report as it stands and no error). It spares the controller polling.
type Waiter interface {
	WaitOperation(ctx context.Context, clusterID string, op Operation) (OperationReport, error)
}

// Reverter is optional (upshift.ops.v1.Ops/RevertCluster): it takes a
// cluster back to the versions it ran before, in whatever order the
// provider needs (typically node pools first, then the control plane).
// Without it the controller reverts with UpgradeNodePool and UpgradeMaster
// to the recorded versions, node pools first, so no kubelet is ever newer
// than its API server.
type Reverter interface {
	RevertCluster(ctx context.Context, clusterID string, to ClusterVersion) (Operation, error)
}
