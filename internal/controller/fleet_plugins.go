package controller

import (
	"context"
	"errors"

	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/internal/plugin"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// PluginPool is a PluginDialer over one connection pool: a fleet's
// reconciles share its plugin's connection. Close closes the pool.
func PluginPool(opts plugin.Options) (PluginDialer, func() error) {
	pool := plugin.NewPool(opts)
	dial := func(_ context.Context, ep PluginEndpoint) (fleet.Plugin, error) {
		c, err := pool.Client(plugin.Endpoint{Address: ep.Address, Insecure: ep.Insecure, CA: ep.CA, Cert: ep.Cert, Key: ep.Key, ServerName: ep.ServerName})
		if err != nil {
			return nil, err
		}
		return grpcPlugin{c}, nil
	}
	return dial, pool.Close
}

// grpcPlugin is the gRPC client as a fleet.Plugin. The client's errors
// are the rollout's (fleet.ErrPluginDown is plugin.ErrPluginDown); what
// it adds is a report that falls back to the status, and capabilities
// that are none while the plugin cannot be asked.
type grpcPlugin struct{ *plugin.Client }

var _ fleet.Plugin = grpcPlugin{}

// Report describes the operation where the plugin can, else asks its
// status.
func (g grpcPlugin) Report(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	if g.Capabilities(ctx).Describe {
		r, err := g.Describe(ctx, id, op)
		if !errors.Is(err, plugin.ErrUnsupported) {
			return r, err
		}
	}
	s, err := g.GetOperationStatus(ctx, id, op)
	return pluginsdk.OperationReport{Status: s}, err
}

// Capabilities are what the plugin said it serves; none while it cannot
// be asked (asked again next time).
func (g grpcPlugin) Capabilities(ctx context.Context) fleet.Capabilities {
	c, err := g.Client.Capabilities(ctx)
	if err != nil {
		return fleet.Capabilities{}
	}
	return fleet.Capabilities{Describe: c.Describe, Wait: c.Wait, Revert: c.Revert, Find: c.Find}
}

func (g grpcPlugin) RevertCluster(ctx context.Context, id string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error) {
	return g.Revert(ctx, id, to)
}
