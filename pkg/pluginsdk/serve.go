package pluginsdk

import (
	"context"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
	opsv1 "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/upshift/ops/v1"
)

// stopGrace is how long a stopping plugin lets calls in flight finish
// before it closes their connections.
const stopGrace = 10 * time.Second

// Serve serves impl on lis until ctx ends, then stops gracefully and
// returns nil. It serves plugin.Cluster; upshift.ops.v1.Ops when impl
// implements Describer, Waiter, Reverter or Finder (any it lacks answers
// Unimplemented); and the standard gRPC health service
// (grpc.health.v1.Health), SERVING until the plugin stops.
//
// TLS is required unless Insecure is given: Serve refuses to start with
// neither WithTLS nor Insecure. Serve closes lis when it returns.
func Serve(ctx context.Context, lis net.Listener, impl Cluster, opts ...ServeOption) error {
	var cfg serveConfig
	for _, o := range opts {
		o(&cfg)
	}
	creds, err := cfg.credentials()
	if err != nil {
		_ = lis.Close()
		return err
	}
	srv := grpc.NewServer(append(cfg.serverOptions, grpc.Creds(creds))...)
	plugin.RegisterClusterServer(srv, &clusterServer{impl: impl})
	services := []string{plugin.Cluster_ServiceDesc.ServiceName}
	if ops := newOpsServer(impl, ctx); ops != nil {
		opsv1.RegisterOpsServer(srv, ops)
		services = append(services, opsv1.Ops_ServiceDesc.ServiceName)
	}
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	for _, name := range append(services, "") { // "": the server as a whole
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}

	served := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-served:
			return
		case <-ctx.Done():
		}
		hs.Shutdown() // NOT_SERVING first, so health checkers stop sending
		force := time.AfterFunc(stopGrace, srv.Stop)
		defer force.Stop()
		srv.GracefulStop()
	}()
	err = srv.Serve(lis)
	close(served)
	<-stopped // Serve returns before the calls in flight have drained
	if ctx.Err() != nil {
		return nil
	}
	return err
}
