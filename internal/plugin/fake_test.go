package plugin

import (
	"context"
	"net"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// fakePlugin is a pluginsdk.Cluster whose methods are its fields; a nil
// field answers zero values (and an operation of the method's name).
type fakePlugin struct {
	getVersion       func(ctx context.Context, id string) (pluginsdk.ClusterVersion, error)
	getClusterStatus func(ctx context.Context, id string) (pluginsdk.ClusterStatus, error)
	upgradeMaster    func(ctx context.Context, id, version string) (pluginsdk.Operation, error)
}

func (f *fakePlugin) HealthCheck(context.Context) error { return nil }

func (f *fakePlugin) GetVersion(ctx context.Context, id string) (pluginsdk.ClusterVersion, error) {
	if f.getVersion == nil {
		return pluginsdk.ClusterVersion{Master: "1.31.0"}, nil
	}
	return f.getVersion(ctx, id)
}

func (f *fakePlugin) GetClusterStatus(ctx context.Context, id string) (pluginsdk.ClusterStatus, error) {
	if f.getClusterStatus == nil {
		return pluginsdk.ClusterStatus{Available: true}, nil
	}
	return f.getClusterStatus(ctx, id)
}

func (f *fakePlugin) GetOperationStatus(context.Context, string, pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
	return pluginsdk.OperationDone, nil
}

func (f *fakePlugin) ServiceIn(context.Context, string) (pluginsdk.Operation, error) {
	return pluginsdk.Operation{Type: "ServiceIn", ID: "in-1"}, nil
}

func (f *fakePlugin) ServiceOut(context.Context, string) (pluginsdk.Operation, error) {
	return pluginsdk.Operation{Type: "ServiceOut", ID: "out-1"}, nil
}

func (f *fakePlugin) UpgradeMaster(ctx context.Context, id, version string) (pluginsdk.Operation, error) {
	if f.upgradeMaster == nil {
		return pluginsdk.Operation{Type: "UpgradeMaster", ID: "m-1"}, nil
	}
	return f.upgradeMaster(ctx, id, version)
}

func (f *fakePlugin) UpgradeNodePool(context.Context, string, string, string) (pluginsdk.Operation, error) {
	return pluginsdk.Operation{Type: "UpgradeNodePool", ID: "np-1"}, nil
}

// fakeOpsPlugin adds every upshift.ops.v1 interface to a fakePlugin.
type fakeOpsPlugin struct {
	*fakePlugin
	describe func(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error)
	wait     func(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error)
	revert   func(ctx context.Context, id string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error)
}

func (f *fakeOpsPlugin) DescribeOperation(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	return f.describe(ctx, id, op)
}

func (f *fakeOpsPlugin) WaitOperation(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	return f.wait(ctx, id, op)
}

func (f *fakeOpsPlugin) RevertCluster(ctx context.Context, id string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error) {
	return f.revert(ctx, id, to)
}

// startPlugin serves impl on 127.0.0.1 until the test ends and returns
// its address.
func startPlugin(t *testing.T, impl pluginsdk.Cluster, opts ...pluginsdk.ServeOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startPluginOn(t, lis, impl, opts...)
}

func startPluginOn(t *testing.T, lis net.Listener, impl pluginsdk.Cluster, opts ...pluginsdk.ServeOption) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := pluginsdk.Serve(ctx, lis, impl, opts...); err != nil {
			t.Errorf("plugin: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return lis.Addr().String()
}

// dial is a client of the plugin at ep, closed when the test ends.
func dial(t *testing.T, ep Endpoint, opts Options) *Client {
	t.Helper()
	c, err := Dial(ep, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// quick are options for tests: short deadlines and backoff.
var quick = Options{
	CallTimeout: 2 * time.Second,
	WaitTimeout: 2 * time.Second,
	Backoff:     wait.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Steps: 3},
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
