package pluginsdk_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// tinyPlugin operates clusters whose every operation is done at once. A
// real plugin calls its provider's API and returns the provider's
// operation, which GetOperationStatus then looks up.
type tinyPlugin struct {
	mu       sync.Mutex
	versions map[string]*pluginsdk.ClusterVersion
	out      map[string]bool
}

func (p *tinyPlugin) HealthCheck(context.Context) error { return nil }

func (p *tinyPlugin) GetVersion(_ context.Context, id string) (pluginsdk.ClusterVersion, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.versions[id]
	if !ok {
		return pluginsdk.ClusterVersion{}, status.Errorf(codes.NotFound, "cluster %q: not known to this plugin", id)
	}
	return *v, nil
}

func (p *tinyPlugin) GetClusterStatus(_ context.Context, id string) (pluginsdk.ClusterStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := pluginsdk.ClusterStatus{Service: pluginsdk.ServiceIn, Available: true}
	if p.out[id] {
		st.Service = pluginsdk.ServiceOut
	}
	return st, nil
}

func (p *tinyPlugin) GetOperationStatus(context.Context, string, pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
	return pluginsdk.OperationDone, nil
}

func (p *tinyPlugin) ServiceIn(_ context.Context, id string) (pluginsdk.Operation, error) {
	return p.do("ServiceIn", func() { p.out[id] = false })
}

func (p *tinyPlugin) ServiceOut(_ context.Context, id string) (pluginsdk.Operation, error) {
	return p.do("ServiceOut", func() { p.out[id] = true })
}

func (p *tinyPlugin) UpgradeMaster(_ context.Context, id, version string) (pluginsdk.Operation, error) {
	return p.do("UpgradeMaster", func() { p.versions[id].Master = version })
}

func (p *tinyPlugin) UpgradeNodePool(_ context.Context, id, pool, version string) (pluginsdk.Operation, error) {
	return p.do("UpgradeNodePool", func() {
		for i := range p.versions[id].NodePools {
			if p.versions[id].NodePools[i].ID == pool {
				p.versions[id].NodePools[i].Version = version
			}
		}
	})
}

func (p *tinyPlugin) do(typ string, f func()) (pluginsdk.Operation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
	return pluginsdk.Operation{Type: typ, ID: typ + "-1"}, nil
}

// A plugin in a few dozen lines: implement pluginsdk.Cluster, then serve
// it over mutual TLS (clients must present a certificate from ca.crt).
func Example() {
	p := &tinyPlugin{
		versions: map[string]*pluginsdk.ClusterVersion{
			"prod-a": {Master: "1.33.4", NodePools: []pluginsdk.NodePoolVersion{{ID: "default", Version: "1.33.4"}}},
		},
		out: map[string]bool{},
	}
	tlsConfig, err := pluginsdk.ServerTLSFromFiles("tls.crt", "tls.key", "ca.crt")
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", ":39000")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Println("serving on", lis.Addr())
	if err := pluginsdk.Serve(ctx, lis, p, pluginsdk.WithTLS(tlsConfig)); err != nil {
		log.Fatal(err)
	}
}
