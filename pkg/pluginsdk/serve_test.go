package pluginsdk_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
	opsv1 "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/upshift/ops/v1"
)

// served is a plugin served on 127.0.0.1 for one test.
type served struct {
	addr string
	stop context.CancelFunc
	done chan struct{} // closed when Serve has returned err
	err  error
}

func serve(t *testing.T, impl pluginsdk.Cluster, opts ...pluginsdk.ServeOption) *served {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{addr: lis.Addr().String(), stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = pluginsdk.Serve(ctx, lis, impl, opts...)
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	return s
}

func dialInsecure(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Serve refuses to start without a choice of transport security, and
// with both.
func TestServeNeedsTransportChoice(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []pluginsdk.ServeOption
		want string
	}{
		{"neither", nil, "pass WithTLS(cfg)"},
		{"both", []pluginsdk.ServeOption{pluginsdk.Insecure(), pluginsdk.WithTLS(nil)}, "choose one"},
		{"nil config", []pluginsdk.ServeOption{pluginsdk.WithTLS(nil)}, "WithTLS(nil)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			err = pluginsdk.Serve(context.Background(), lis, &fakeCluster{}, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Serve: %v, want an error saying %q", err, tc.want)
			}
			if _, err := lis.Accept(); err == nil {
				t.Error("the listener is still open")
			}
		})
	}
}

// The adapter carries requests and answers both ways, repeating the
// cluster's ID where the wire repeats it.
func TestServeCluster(t *testing.T) {
	var gotOp pluginsdk.Operation
	impl := &fakeCluster{
		getVersion: func(_ context.Context, id string) (pluginsdk.ClusterVersion, error) {
			return pluginsdk.ClusterVersion{Master: "1.31.2", NodePools: []pluginsdk.NodePoolVersion{{ID: "np-1", Version: "1.30.5"}}}, nil
		},
		getClusterStatus: func(context.Context, string) (pluginsdk.ClusterStatus, error) {
			return pluginsdk.ClusterStatus{Service: pluginsdk.ServiceOut, Available: true}, nil
		},
		getOperationStatus: func(_ context.Context, _ string, op pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
			gotOp = op
			return pluginsdk.OperationRunning, nil
		},
	}
	c := plugin.NewClusterClient(dialInsecure(t, serve(t, impl, pluginsdk.Insecure()).addr))
	ctx := callCtx(t)

	v, err := c.GetVersion(ctx, &plugin.GetVersionRequest{ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if v.GetMaster().GetClusterID() != "c1" || v.GetMaster().GetVersion() != "1.31.2" || len(v.GetNodePools()) != 1 ||
		v.GetNodePools()[0].GetClusterID() != "c1" || v.GetNodePools()[0].GetNodePoolID() != "np-1" || v.GetNodePools()[0].GetVersion() != "1.30.5" {
		t.Errorf("GetVersion: %v", v)
	}
	st, err := c.GetClusterStatus(ctx, &plugin.GetClusterStatusRequest{ClusterID: "c1"})
	if err != nil || st.GetStatus() != plugin.ClusterStatusType_STATUS_SERVICE_OUT || !st.GetIsAvailable() {
		t.Errorf("GetClusterStatus: %v, %v", st, err)
	}
	opStatus, err := c.GetOperationStatus(ctx, &plugin.GetOperationStatusRequest{ClusterID: "c1", OperationID: "op-7", Type: "UpgradeMaster"})
	if err != nil || opStatus.GetStatus() != plugin.OperationStatusType_RUNNING {
		t.Errorf("GetOperationStatus: %v, %v", opStatus, err)
	}
	if gotOp != (pluginsdk.Operation{Type: "UpgradeMaster", ID: "op-7"}) {
		t.Errorf("the plugin was asked about %+v", gotOp)
	}
	op, err := c.UpgradeNodePool(ctx, &plugin.NodePoolVersion{ClusterID: "c1", NodePoolID: "np-1", Version: "1.31.2"})
	if err != nil || op.GetType() != "UpgradeNodePool" || op.GetOperationID() != "np-1" {
		t.Errorf("UpgradeNodePool: %v, %v", op, err)
	}
	if _, err := c.ServiceIn(ctx, &plugin.ServiceInRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ServiceIn without a cluster: %v, want InvalidArgument", err)
	}
}

// A plugin's errors reach the client as gRPC statuses: its own status
// kept, a context's end as DeadlineExceeded or Canceled, anything else
// Unknown with its text.
func TestServeErrors(t *testing.T) {
	var next error
	impl := &fakeCluster{upgradeMaster: func(context.Context, string, string) (pluginsdk.Operation, error) {
		return pluginsdk.Operation{}, next
	}}
	c := plugin.NewClusterClient(dialInsecure(t, serve(t, impl, pluginsdk.Insecure()).addr))
	for _, tc := range []struct {
		err  error
		code codes.Code
		msg  string
	}{
		{status.Error(codes.FailedPrecondition, "node pool newer than master"), codes.FailedPrecondition, "node pool newer than master"},
		{errorsJoin("upgrade", status.Error(codes.NotFound, "no cluster c1")), codes.NotFound, "no cluster c1"},
		{context.DeadlineExceeded, codes.DeadlineExceeded, ""},
		{context.Canceled, codes.Canceled, ""},
		{errors.New("provider quota exhausted"), codes.Unknown, "provider quota exhausted"},
	} {
		next = tc.err
		_, err := c.UpgradeMaster(callCtx(t), &plugin.MasterVersion{ClusterID: "c1", Version: "1.32.0"})
		if s := status.Convert(err); s.Code() != tc.code || !strings.Contains(s.Message(), tc.msg) {
			t.Errorf("the plugin's %v answered %v, want %v with %q", tc.err, err, tc.code, tc.msg)
		}
	}
}

func errorsJoin(prefix string, err error) error { return errors.Join(errors.New(prefix), err) }

// upshift.ops.v1 is served only by a plugin that implements one of its
// interfaces; the others answer Unimplemented.
func TestServeOps(t *testing.T) {
	req := &opsv1.OperationRequest{ClusterID: "c1", Operation: &plugin.Operation{Type: "UpgradeMaster", OperationID: "op-1"}}

	plain := opsv1.NewOpsClient(dialInsecure(t, serve(t, &fakeCluster{}, pluginsdk.Insecure()).addr))
	if _, err := plain.DescribeOperation(callCtx(t), req); status.Code(err) != codes.Unimplemented {
		t.Errorf("DescribeOperation of a plugin without upshift.ops.v1: %v, want Unimplemented", err)
	}

	waiter := &waitingCluster{fakeCluster: &fakeCluster{}, wait: func(_ context.Context, _ string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
		return pluginsdk.OperationReport{Status: pluginsdk.OperationDone, Message: "upgraded " + op.ID, Done: 3, Total: 3}, nil
	}}
	c := opsv1.NewOpsClient(dialInsecure(t, serve(t, waiter, pluginsdk.Insecure()).addr))
	rep, err := c.WaitOperation(callCtx(t), &opsv1.WaitOperationRequest{ClusterID: req.ClusterID, Operation: req.Operation})
	if err != nil || rep.GetStatus() != plugin.OperationStatusType_DONE || rep.GetMessage() != "upgraded op-1" || rep.GetDone() != 3 || rep.GetTotal() != 3 {
		t.Errorf("WaitOperation: %v, %v", rep, err)
	}
	if _, err := c.DescribeOperation(callCtx(t), req); status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "Describer") {
		t.Errorf("DescribeOperation of a plugin that only waits: %v, want Unimplemented naming Describer", err)
	}
	if _, err := c.RevertCluster(callCtx(t), &opsv1.RevertClusterRequest{ClusterID: "c1"}); status.Code(err) != codes.Unimplemented {
		t.Errorf("RevertCluster of a plugin that only waits: %v, want Unimplemented", err)
	}
}

// WaitOperation returns after the request's timeout with the report as it
// stands, and at once when the plugin stops; the plugin then stops
// without waiting out the calls' deadlines.
func TestWaitOperationEnds(t *testing.T) {
	waiter := &waitingCluster{fakeCluster: &fakeCluster{}, wait: func(ctx context.Context, _ string, _ pluginsdk.Operation) (pluginsdk.OperationReport, error) {
		<-ctx.Done()
		return pluginsdk.OperationReport{Status: pluginsdk.OperationRunning, Message: "still upgrading"}, nil
	}}
	s := serve(t, waiter, pluginsdk.Insecure())
	c := opsv1.NewOpsClient(dialInsecure(t, s.addr))
	req := &opsv1.WaitOperationRequest{ClusterID: "c1", Operation: &plugin.Operation{OperationID: "op-1"}, Timeout: durationpb.New(100 * time.Millisecond)}
	start := time.Now()
	rep, err := c.WaitOperation(callCtx(t), req)
	if err != nil || rep.GetStatus() != plugin.OperationStatusType_RUNNING {
		t.Fatalf("WaitOperation: %v, %v", rep, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a 100ms wait took %v", d)
	}

	req.Timeout = nil // until the call's deadline, a minute away
	answered := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		_, err := c.WaitOperation(ctx, req)
		answered <- err
	}()
	time.Sleep(200 * time.Millisecond) // the wait reaches the plugin
	start = time.Now()
	s.stop()
	<-s.done
	if s.err != nil {
		t.Errorf("Serve after its context ended: %v, want nil", s.err)
	}
	if err := <-answered; err != nil {
		t.Errorf("the wait in flight: %v, want its report", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stopping took %v with a wait in flight", d)
	}
}

// Waiter implementations that answer a finished wait with the context's
// error still give the caller the operation's status.
func TestWaitOperationContextError(t *testing.T) {
	impl := &waitingCluster{
		fakeCluster: &fakeCluster{getOperationStatus: func(context.Context, string, pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
			return pluginsdk.OperationRunning, nil
		}},
		wait: func(ctx context.Context, _ string, _ pluginsdk.Operation) (pluginsdk.OperationReport, error) {
			<-ctx.Done()
			return pluginsdk.OperationReport{}, ctx.Err()
		},
	}
	c := opsv1.NewOpsClient(dialInsecure(t, serve(t, impl, pluginsdk.Insecure()).addr))
	rep, err := c.WaitOperation(callCtx(t), &opsv1.WaitOperationRequest{ClusterID: "c1", Operation: &plugin.Operation{OperationID: "op-1"}, Timeout: durationpb.New(50 * time.Millisecond)})
	if err != nil || rep.GetStatus() != plugin.OperationStatusType_RUNNING {
		t.Errorf("WaitOperation: %v, %v; want RUNNING", rep, err)
	}
}

// The standard health service says SERVING for the server and for each
// plugin service.
func TestServeHealth(t *testing.T) {
	waiter := &waitingCluster{fakeCluster: &fakeCluster{}}
	h := healthpb.NewHealthClient(dialInsecure(t, serve(t, waiter, pluginsdk.Insecure()).addr))
	for _, svc := range []string{"", "plugin.Cluster", "upshift.ops.v1.Ops"} {
		r, err := h.Check(callCtx(t), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health of %q: %v, %v", svc, r, err)
		}
	}
}
