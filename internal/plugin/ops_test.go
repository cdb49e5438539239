package plugin

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// sent counts the calls a client sends, by full method name.
type sent struct {
	mu    sync.Mutex
	calls map[string]int
}

func (s *sent) interceptor() grpc.DialOption {
	return grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		s.mu.Lock()
		s.calls[method]++
		s.mu.Unlock()
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

func (s *sent) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Against a plugin without upshift.ops.v1, Describe, Wait and Revert give
// ErrUnsupported, and each asks the plugin once.
func TestOpsUnsupported(t *testing.T) {
	s := &sent{calls: map[string]int{}}
	opts := quick
	opts.DialOptions = []grpc.DialOption{s.interceptor()}
	c := dial(t, Endpoint{Address: startPlugin(t, &fakePlugin{}, pluginsdk.Insecure()), Insecure: true}, opts)
	op := pluginsdk.Operation{Type: "UpgradeMaster", ID: "m-1"}

	for i := 0; i < 3; i++ {
		if _, err := c.Describe(callCtx(t), "c1", op); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Describe %d: %v, want ErrUnsupported", i, err)
		}
		if _, err := c.Wait(callCtx(t), "c1", op); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Wait %d: %v, want ErrUnsupported", i, err)
		}
		if _, err := c.Revert(callCtx(t), "c1", pluginsdk.ClusterVersion{Master: "1.31.0"}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Revert %d: %v, want ErrUnsupported", i, err)
		}
	}
	for _, m := range []string{"DescribeOperation", "WaitOperation", "RevertCluster"} {
		if n := s.count("/upshift.ops.v1.Ops/" + m); n != 1 {
			t.Errorf("%s sent %d times, want once", m, n)
		}
	}
	if _, err := c.GetOperationStatus(callCtx(t), "c1", op); err != nil {
		t.Errorf("GetOperationStatus, the fallback: %v", err)
	}
}

// Against a plugin that serves upshift.ops.v1, Describe, Wait and Revert
// carry their requests and answers.
func TestOps(t *testing.T) {
	var revertedTo pluginsdk.ClusterVersion
	var waited time.Duration
	impl := &fakeOpsPlugin{
		fakePlugin: &fakePlugin{},
		describe: func(_ context.Context, _ string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
			return pluginsdk.OperationReport{Status: pluginsdk.OperationFailed, Message: op.ID + ": quota exceeded", Done: 1, Total: 3}, nil
		},
		wait: func(ctx context.Context, _ string, _ pluginsdk.Operation) (pluginsdk.OperationReport, error) {
			start := time.Now()
			<-ctx.Done() // the request's timeout
			waited = time.Since(start)
			return pluginsdk.OperationReport{Status: pluginsdk.OperationRunning}, nil
		},
		revert: func(_ context.Context, _ string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error) {
			revertedTo = to
			return pluginsdk.Operation{Type: "RevertCluster", ID: "r-1"}, nil
		},
	}
	opts := quick
	opts.WaitTimeout = 200 * time.Millisecond
	c := dial(t, Endpoint{Address: startPlugin(t, impl, pluginsdk.Insecure()), Insecure: true}, opts)
	op := pluginsdk.Operation{Type: "UpgradeNodePool", ID: "np-1"}

	rep, err := c.Describe(callCtx(t), "c1", op)
	if err != nil || rep != (pluginsdk.OperationReport{Status: pluginsdk.OperationFailed, Message: "np-1: quota exceeded", Done: 1, Total: 3}) {
		t.Errorf("Describe: %+v, %v", rep, err)
	}
	rep, err = c.Wait(callCtx(t), "c1", op)
	if err != nil || rep.Status != pluginsdk.OperationRunning {
		t.Errorf("Wait: %+v, %v", rep, err)
	}
	if waited < 150*time.Millisecond || waited > 5*time.Second {
		t.Errorf("the plugin waited %v, want about WaitTimeout (200ms)", waited)
	}
	to := pluginsdk.ClusterVersion{Master: "1.31.4", NodePools: []pluginsdk.NodePoolVersion{{ID: "a", Version: "1.31.4"}}}
	got, err := c.Revert(callCtx(t), "c1", to)
	if err != nil || got != (pluginsdk.Operation{Type: "RevertCluster", ID: "r-1"}) {
		t.Errorf("Revert: %+v, %v", got, err)
	}
	if !cmp.Equal(revertedTo, to) {
		t.Errorf("reverted to %s", cmp.Diff(to, revertedTo))
	}
}

// Wait asks the plugin for no longer than the caller can wait.
func TestWaitTimeoutFitsDeadline(t *testing.T) {
	c := &Client{opts: Options{WaitTimeout: time.Minute}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if got := c.waitTimeout(ctx); got > 4*time.Second || got < 3*time.Second {
		t.Errorf("wait timeout %v with 5s left, want about 4s", got)
	}
	if got := c.waitTimeout(context.Background()); got != time.Minute {
		t.Errorf("wait timeout %v without a deadline, want WaitTimeout", got)
	}
}

// Capabilities says what a plugin serves: all of upshift.ops.v1 for one
// that implements every optional interface, none for a plugin.Cluster
// alone (which answers Capabilities Unimplemented), asked once.
func TestCapabilities(t *testing.T) {
	full := &fakeOpsPlugin{fakePlugin: &fakePlugin{}}
	c := dial(t, Endpoint{Address: startPlugin(t, full, pluginsdk.Insecure()), Insecure: true}, quick)
	if got, err := c.Capabilities(callCtx(t)); err != nil || got != (Capabilities{Describe: true, Wait: true, Revert: true}) {
		t.Errorf("a plugin with every interface: %+v, %v", got, err)
	}
	s := &sent{calls: map[string]int{}}
	opts := quick
	opts.DialOptions = []grpc.DialOption{s.interceptor()}
	c = dial(t, Endpoint{Address: startPlugin(t, &fakePlugin{}, pluginsdk.Insecure()), Insecure: true}, opts)
	for range 2 {
		if got, err := c.Capabilities(callCtx(t)); err != nil || got != (Capabilities{}) {
			t.Errorf("a plugin.Cluster alone: %+v, %v", got, err)
		}
	}
	if n := s.count("/upshift.ops.v1.Ops/Capabilities"); n != 1 {
		t.Errorf("Capabilities asked %d times, want once", n)
	}
	if _, err := c.Revert(callCtx(t), "c1", pluginsdk.ClusterVersion{Master: "1.31.0"}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Revert after Capabilities said no: %v", err)
	}
	if n := s.count("/upshift.ops.v1.Ops/RevertCluster"); n != 0 {
		t.Errorf("RevertCluster sent %d times after Capabilities said no", n)
	}
}
