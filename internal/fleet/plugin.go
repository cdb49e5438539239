package fleet

import (
	"context"

	"github.com/upshift-dev/upshift/internal/plugin"
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
	// Wait returns when the operation is no longer running, or when ctx
	// ends; ErrUnsupported when the plugin cannot wait (then operations
	// are polled).
	Wait(ctx context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationReport, error)
	// Capabilities says which of upshift.ops.v1's calls the plugin
	// serves.
	Capabilities(ctx context.Context) Capabilities
	RevertCluster(ctx context.Context, clusterID string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error)
	// Find is the operation a call sent with requestID started; an
	// error for which pluginsdk.IsNoSuchRequest holds when none reached
	// the plugin; ErrUnsupported when the plugin cannot look calls up.
	Find(ctx context.Context, clusterID, requestID string) (pluginsdk.Operation, error)
}

// ErrPluginDown marks an error of a plugin that could not be reached: the
// rollout stops where it is until it answers, rather than failing a
// cluster for it. It is the plugin client's own, so its errors need no
// translation.
var ErrPluginDown = plugin.ErrPluginDown

// Capabilities are the calls of upshift.ops.v1 a plugin serves.
type Capabilities struct {
	Describe, Wait, Revert, Find bool
}

// ErrUnsupported: the plugin does not serve the call (an addition of
// upshift.ops.v1 it does not implement). The plugin client's own.
var ErrUnsupported = plugin.ErrUnsupported

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

func (a adapted) Wait(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	if w, ok := a.Cluster.(pluginsdk.Waiter); ok {
		return w.WaitOperation(ctx, id, op)
	}
	return pluginsdk.OperationReport{}, ErrUnsupported
}

func (a adapted) Capabilities(context.Context) Capabilities {
	_, d := a.Cluster.(pluginsdk.Describer)
	_, w := a.Cluster.(pluginsdk.Waiter)
	_, r := a.Cluster.(pluginsdk.Reverter)
	_, f := a.Cluster.(pluginsdk.Finder)
	return Capabilities{Describe: d, Wait: w, Revert: r, Find: f}
}

func (a adapted) Find(ctx context.Context, id, requestID string) (pluginsdk.Operation, error) {
	f, ok := a.Cluster.(pluginsdk.Finder)
	if !ok {
		return pluginsdk.Operation{}, ErrUnsupported
	}
	return f.FindOperation(ctx, id, requestID)
}

func (a adapted) RevertCluster(ctx context.Context, id string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error) {
	r, ok := a.Cluster.(pluginsdk.Reverter)
	if !ok {
		return pluginsdk.Operation{}, ErrUnsupported
	}
	return r.RevertCluster(ctx, id, to)
}
