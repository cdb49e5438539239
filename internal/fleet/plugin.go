package fleet

import (
	"context"
	"errors"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Plugin is what a rollout needs of an ops plugin: its Cluster service,
// and a report and a revert that use the plugin's additions when it
// serves them.
type Plugin interface {
	pluginsdk.Cluster
	// Report says where an operation is, with the plugin's message and
	// progress when it gives them.
	Report(ctx context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationReport, error)
	// CanRevert tells whether RevertCluster is served.
	CanRevert(ctx context.Context) bool
	RevertCluster(ctx context.Context, clusterID string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error)
}

// ErrPluginDown marks an error of a plugin that could not be reached: the
// rollout stops where it is until it answers, rather than failing a
// cluster for it.
var ErrPluginDown = errors.New("the ops plugin does not answer")

// Adapt makes a Plugin of an implementation in this process (the sim
// plugin in tests and benchmarks): its optional interfaces are used when
// it has them.
func Adapt(c pluginsdk.Cluster) Plugin { return adapted{c} }

type adapted struct{ pluginsdk.Cluster }

func (a adapted) Report(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	if d, ok := a.Cluster.(pluginsdk.Describer); ok {
		return d.DescribeOperation(ctx, id, op)
	}
	s, err := a.GetOperationStatus(ctx, id, op)
	return pluginsdk.OperationReport{Status: s}, err
}

func (a adapted) CanRevert(context.Context) bool {
	_, ok := a.Cluster.(pluginsdk.Reverter)
	return ok
}

func (a adapted) RevertCluster(ctx context.Context, id string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error) {
	r, ok := a.Cluster.(pluginsdk.Reverter)
	if !ok {
		return pluginsdk.Operation{}, errors.New("the plugin does not serve RevertCluster")
	}
	return r.RevertCluster(ctx, id, to)
}
