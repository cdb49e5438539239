package pluginsdk_test

import (
	"context"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// fakeCluster is a Cluster whose methods are its fields; a nil field
// answers zero values.
type fakeCluster struct {
	healthCheck        func(ctx context.Context) error
	getVersion         func(ctx context.Context, id string) (pluginsdk.ClusterVersion, error)
	getClusterStatus   func(ctx context.Context, id string) (pluginsdk.ClusterStatus, error)
	getOperationStatus func(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationStatus, error)
	serviceIn          func(ctx context.Context, id string) (pluginsdk.Operation, error)
	upgradeMaster      func(ctx context.Context, id, version string) (pluginsdk.Operation, error)
}

func (f *fakeCluster) HealthCheck(ctx context.Context) error {
	if f.healthCheck == nil {
		return nil
	}
	return f.healthCheck(ctx)
}

func (f *fakeCluster) GetVersion(ctx context.Context, id string) (pluginsdk.ClusterVersion, error) {
	if f.getVersion == nil {
		return pluginsdk.ClusterVersion{}, nil
	}
	return f.getVersion(ctx, id)
}

func (f *fakeCluster) GetClusterStatus(ctx context.Context, id string) (pluginsdk.ClusterStatus, error) {
	if f.getClusterStatus == nil {
		return pluginsdk.ClusterStatus{}, nil
	}
	return f.getClusterStatus(ctx, id)
}

func (f *fakeCluster) GetOperationStatus(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
	if f.getOperationStatus == nil {
		return pluginsdk.OperationUnknown, nil
	}
	return f.getOperationStatus(ctx, id, op)
}

func (f *fakeCluster) ServiceIn(ctx context.Context, id string) (pluginsdk.Operation, error) {
	if f.serviceIn == nil {
		return pluginsdk.Operation{Type: "ServiceIn", ID: "in"}, nil
	}
	return f.serviceIn(ctx, id)
}

func (f *fakeCluster) ServiceOut(context.Context, string) (pluginsdk.Operation, error) {
	return pluginsdk.Operation{Type: "ServiceOut", ID: "out"}, nil
}

func (f *fakeCluster) UpgradeMaster(ctx context.Context, id, version string) (pluginsdk.Operation, error) {
	if f.upgradeMaster == nil {
		return pluginsdk.Operation{Type: "UpgradeMaster", ID: "m"}, nil
	}
	return f.upgradeMaster(ctx, id, version)
}

func (f *fakeCluster) UpgradeNodePool(_ context.Context, _, pool, _ string) (pluginsdk.Operation, error) {
	return pluginsdk.Operation{Type: "UpgradeNodePool", ID: pool}, nil
}

// waitingCluster adds Waiter (and only Waiter) to a fakeCluster.
type waitingCluster struct {
	*fakeCluster
	wait func(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error)
}

func (w *waitingCluster) WaitOperation(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	return w.wait(ctx, id, op)
}
