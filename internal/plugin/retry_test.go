package plugin

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// A read that fails Unavailable is sent again and succeeds; a mutation
// that fails Unavailable is sent once, and reported as the plugin down.
func TestReadsRetriedMutationsNot(t *testing.T) {
	var statusCalls, upgradeCalls atomic.Int32
	impl := &fakePlugin{
		getClusterStatus: func(context.Context, string) (pluginsdk.ClusterStatus, error) {
			if statusCalls.Add(1) == 1 {
				return pluginsdk.ClusterStatus{}, status.Error(codes.Unavailable, "provider API briefly down")
			}
			return pluginsdk.ClusterStatus{Service: pluginsdk.ServiceOut, Available: true}, nil
		},
		upgradeMaster: func(context.Context, string, string) (pluginsdk.Operation, error) {
			upgradeCalls.Add(1)
			return pluginsdk.Operation{}, status.Error(codes.Unavailable, "provider API briefly down")
		},
	}
	c := dial(t, Endpoint{Address: startPlugin(t, impl, pluginsdk.Insecure()), Insecure: true}, quick)

	st, err := c.GetClusterStatus(callCtx(t), "c1")
	if err != nil || st != (pluginsdk.ClusterStatus{Service: pluginsdk.ServiceOut, Available: true}) {
		t.Errorf("GetClusterStatus after a transient Unavailable: %+v, %v", st, err)
	}
	if n := statusCalls.Load(); n != 2 {
		t.Errorf("the plugin saw %d GetClusterStatus calls, want 2", n)
	}

	_, err = c.UpgradeMaster(callCtx(t), "c1", "1.32.0")
	if !errors.Is(err, ErrPluginDown) || status.Code(err) != codes.Unavailable {
		t.Errorf("UpgradeMaster failing Unavailable: %v, want ErrPluginDown wrapping Unavailable", err)
	}
	if n := upgradeCalls.Load(); n != 1 {
		t.Errorf("the plugin saw %d UpgradeMaster calls, want 1: a mutation is never re-sent", n)
	}
}

// Errors the plugin answers on purpose are returned at once, with their
// code, and are not the plugin being down.
func TestPluginErrorNotRetried(t *testing.T) {
	var calls atomic.Int32
	impl := &fakePlugin{getVersion: func(context.Context, string) (pluginsdk.ClusterVersion, error) {
		calls.Add(1)
		return pluginsdk.ClusterVersion{}, status.Error(codes.NotFound, "no cluster c9")
	}}
	c := dial(t, Endpoint{Address: startPlugin(t, impl, pluginsdk.Insecure()), Insecure: true}, quick)
	_, err := c.GetVersion(callCtx(t), "c9")
	if status.Code(err) != codes.NotFound || errors.Is(err, ErrPluginDown) || calls.Load() != 1 {
		t.Errorf("GetVersion of an unknown cluster: %v after %d calls; want NotFound once", err, calls.Load())
	}
}

// A plugin that is down, refusing connections or never answering, gives
// ErrPluginDown once the retries are spent, within their deadlines.
func TestPluginDown(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := lis.Addr().String()
	lis.Close()

	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never speaks
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()

	opts := quick
	opts.CallTimeout = 300 * time.Millisecond
	for name, addr := range map[string]string{"refusing": refused, "silent": silent.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			c := dial(t, Endpoint{Address: addr, Insecure: true}, opts)
			start := time.Now()
			_, err := c.GetClusterStatus(callCtx(t), "c1")
			if !errors.Is(err, ErrPluginDown) {
				t.Fatalf("GetClusterStatus of a %s plugin: %v, want ErrPluginDown", name, err)
			}
			// four attempts of 300 ms at most, and 70 ms of backoff
			if d := time.Since(start); d > 4*opts.CallTimeout+time.Second {
				t.Errorf("ErrPluginDown after %v", d)
			}
		})
	}
}

// A call whose caller gave up is not the plugin being down.
func TestCallerCancelled(t *testing.T) {
	impl := &fakePlugin{getVersion: func(ctx context.Context, _ string) (pluginsdk.ClusterVersion, error) {
		<-ctx.Done()
		return pluginsdk.ClusterVersion{}, ctx.Err()
	}}
	c := dial(t, Endpoint{Address: startPlugin(t, impl, pluginsdk.Insecure()), Insecure: true}, quick)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.GetVersion(ctx, "c1")
	if err == nil || errors.Is(err, ErrPluginDown) {
		t.Errorf("GetVersion past the caller's deadline: %v, want an error that is not ErrPluginDown", err)
	}
}
