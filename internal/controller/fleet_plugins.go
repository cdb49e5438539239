package controller

import (
	"context"
	"errors"
	"fmt"

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

// grpcPlugin is the gRPC client as a fleet.Plugin: its errors told apart
// as the rollout needs (the plugin down, a call it does not serve).
type grpcPlugin struct{ c *plugin.Client }

var _ fleet.Plugin = grpcPlugin{}

// fleetErr maps the client's sentinels to the rollout's.
func fleetErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, plugin.ErrPluginDown):
		return fmt.Errorf("%w: %w", fleet.ErrPluginDown, err)
	case errors.Is(err, plugin.ErrUnsupported):
		return fmt.Errorf("%w: %w", fleet.ErrUnsupported, err)
	}
	return err
}

func (g grpcPlugin) HealthCheck(ctx context.Context) error { return fleetErr(g.c.HealthCheck(ctx)) }

func (g grpcPlugin) GetVersion(ctx context.Context, id string) (pluginsdk.ClusterVersion, error) {
	v, err := g.c.GetVersion(ctx, id)
	return v, fleetErr(err)
}

func (g grpcPlugin) GetClusterStatus(ctx context.Context, id string) (pluginsdk.ClusterStatus, error) {
	s, err := g.c.GetClusterStatus(ctx, id)
	return s, fleetErr(err)
}

func (g grpcPlugin) GetOperationStatus(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
	s, err := g.c.GetOperationStatus(ctx, id, op)
	return s, fleetErr(err)
}

func (g grpcPlugin) ServiceIn(ctx context.Context, id string) (pluginsdk.Operation, error) {
	op, err := g.c.ServiceIn(ctx, id)
	return op, fleetErr(err)
}

func (g grpcPlugin) ServiceOut(ctx context.Context, id string) (pluginsdk.Operation, error) {
	op, err := g.c.ServiceOut(ctx, id)
	return op, fleetErr(err)
}

func (g grpcPlugin) UpgradeMaster(ctx context.Context, id, version string) (pluginsdk.Operation, error) {
	op, err := g.c.UpgradeMaster(ctx, id, version)
	return op, fleetErr(err)
}

func (g grpcPlugin) UpgradeNodePool(ctx context.Context, id, pool, version string) (pluginsdk.Operation, error) {
	op, err := g.c.UpgradeNodePool(ctx, id, pool, version)
	return op, fleetErr(err)
}

// Report describes the operation where the plugin can, else asks its
// status.
func (g grpcPlugin) Report(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	if g.Capabilities(ctx).Describe {
		r, err := g.c.Describe(ctx, id, op)
		if !errors.Is(err, plugin.ErrUnsupported) {
			return r, fleetErr(err)
		}
	}
	s, err := g.c.GetOperationStatus(ctx, id, op)
	return pluginsdk.OperationReport{Status: s}, fleetErr(err)
}

func (g grpcPlugin) Wait(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	r, err := g.c.Wait(ctx, id, op)
	return r, fleetErr(err)
}

// Capabilities are what the plugin said it serves; none while it cannot
// be asked (asked again next time).
func (g grpcPlugin) Capabilities(ctx context.Context) fleet.Capabilities {
	c, err := g.c.Capabilities(ctx)
	if err != nil {
		return fleet.Capabilities{}
	}
	return fleet.Capabilities{Describe: c.Describe, Wait: c.Wait, Revert: c.Revert}
}

func (g grpcPlugin) RevertCluster(ctx context.Context, id string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error) {
	op, err := g.c.Revert(ctx, id, to)
	return op, fleetErr(err)
}
