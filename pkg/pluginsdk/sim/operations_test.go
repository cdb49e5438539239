package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Operations run for their latency; their effect shows when they end.
func TestOperationsTakeTheirLatency(t *testing.T) {
	s, clk := newSim(t, Config{Count: 1, Latency: map[string]time.Duration{OpServiceOut: time.Second, OpUpgradeMaster: time.Minute, OpUpgradeNodePool: 2 * time.Minute}})
	id := "sim-0001"

	out := started(t)(s.ServiceOut(ctx, id))
	if out.Type != OpServiceOut || opStatus(t, s, id, out) != pluginsdk.OperationRunning {
		t.Errorf("ServiceOut %+v: %v, want running", out, opStatus(t, s, id, out))
	}
	if st, _ := s.GetClusterStatus(ctx, id); st.Service != pluginsdk.ServiceIn {
		t.Error("routed away before the operation ended")
	}
	clk.Step(time.Second)
	if st, _ := s.GetClusterStatus(ctx, id); st.Service != pluginsdk.ServiceOut || opStatus(t, s, id, out) != pluginsdk.OperationDone {
		t.Errorf("after its latency: %+v, %v", st, opStatus(t, s, id, out))
	}

	m := started(t)(s.UpgradeMaster(ctx, id, "1.32.0"))
	clk.Step(time.Minute - time.Nanosecond)
	if v := versionOf(t, s, id); v.Master != DefaultVersion || opStatus(t, s, id, m) != pluginsdk.OperationRunning {
		t.Errorf("control plane at %s before the upgrade ended", v.Master)
	}
	clk.Step(time.Nanosecond)
	if v := versionOf(t, s, id); v.Master != "1.32.0" || opStatus(t, s, id, m) != pluginsdk.OperationDone {
		t.Errorf("control plane at %s after the upgrade", v.Master)
	}

	np := started(t)(s.UpgradeNodePool(ctx, id, "pool-2", "1.32.0"))
	clk.Step(2 * time.Minute)
	v := versionOf(t, s, id)
	if v.NodePools[0].Version != DefaultVersion || v.NodePools[1].Version != "1.32.0" || opStatus(t, s, id, np) != pluginsdk.OperationDone {
		t.Errorf("after upgrading pool-2: %+v", v)
	}
	if m.ID == out.ID || np.ID == m.ID {
		t.Errorf("operation IDs repeat: %s %s %s", out.ID, m.ID, np.ID)
	}
	if st := opStatus(t, s, id, pluginsdk.Operation{Type: OpUpgradeMaster, ID: "nope"}); st != pluginsdk.OperationUnknown {
		t.Errorf("status of an unknown operation: %v, want OperationUnknown", st)
	}
}

// The rules of a cloud: no node pool newer than the control plane, one
// upgrade at a time, known node pools and versions only.
func TestUpgradeRules(t *testing.T) {
	s, clk := newSim(t, Config{Count: 1, Latency: map[string]time.Duration{OpUpgradeMaster: time.Minute}})
	id := "sim-0001"
	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
		want string
	}{
		{"pool newer than master", func() error { _, err := s.UpgradeNodePool(ctx, id, "pool-1", "1.32.0"); return err }, codes.FailedPrecondition, "upgrade the control plane first"},
		{"unknown pool", func() error { _, err := s.UpgradeNodePool(ctx, id, "pool-9", "1.31.0"); return err }, codes.NotFound, "pool-1 pool-2"},
		{"bad version", func() error { _, err := s.UpgradeMaster(ctx, id, "latest"); return err }, codes.InvalidArgument, "write it as 1.31.2"},
		{"master older than pools", func() error { _, err := s.UpgradeMaster(ctx, id, "1.30.9"); return err }, codes.FailedPrecondition, "downgrade the node pools first"},
	} {
		if err := tc.call(); status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.code, tc.want)
		}
	}

	m := started(t)(s.UpgradeMaster(ctx, id, "1.32.0"))
	if _, err := s.UpgradeNodePool(ctx, id, "pool-1", "1.31.0"); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), m.ID) {
		t.Errorf("a second upgrade while one runs: %v", err)
	}
	if _, err := s.ServiceOut(ctx, id); err != nil {
		t.Errorf("routing while an upgrade runs: %v", err)
	}
	clk.Step(time.Minute)
	if _, err := s.UpgradeNodePool(ctx, id, "pool-1", "1.32.0"); err != nil {
		t.Errorf("node pool to the control plane's version after it: %v", err)
	}
}

// A revert sets the node pools back halfway, then the control plane, and
// never leaves a node pool newer than the control plane.
func TestRevertCluster(t *testing.T) {
	s, clk := newSim(t, Config{
		Clusters: []ClusterSpec{{ID: "a", Master: "1.32.0", NodePools: []pluginsdk.NodePoolVersion{{ID: "p", Version: "1.32.0"}, {ID: "q", Version: "1.31.0"}}}},
		Latency:  map[string]time.Duration{OpRevertCluster: 10 * time.Minute},
	})
	if _, err := s.RevertCluster(ctx, "a", pluginsdk.ClusterVersion{Master: "1.31.0"}); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "node pool p") {
		t.Errorf("a revert that leaves a node pool newer: %v", err)
	}
	to := pluginsdk.ClusterVersion{Master: "1.31.0", NodePools: []pluginsdk.NodePoolVersion{{ID: "p", Version: "1.31.0"}}}
	op := started(t)(s.RevertCluster(ctx, "a", to))

	clk.Step(5 * time.Minute)
	v := versionOf(t, s, "a")
	if v.Master != "1.32.0" || v.NodePools[0].Version != "1.31.0" {
		t.Errorf("halfway: %+v, want node pools back and the control plane not yet", v)
	}
	if rep, _ := s.DescribeOperation(ctx, "a", op); rep.Status != pluginsdk.OperationRunning || rep.Done != 1 || rep.Total != 2 {
		t.Errorf("halfway report: %+v", rep)
	}
	clk.Step(5 * time.Minute)
	want := pluginsdk.ClusterVersion{Master: "1.31.0", NodePools: []pluginsdk.NodePoolVersion{{ID: "p", Version: "1.31.0"}, {ID: "q", Version: "1.31.0"}}}
	if v := versionOf(t, s, "a"); !cmp.Equal(v, want) || opStatus(t, s, "a", op) != pluginsdk.OperationDone {
		t.Errorf("after the revert: %s", cmp.Diff(want, v))
	}
}

// WaitOperation sleeps on the clock until the operation ends, or returns
// the running report when ctx ends.
func TestWaitOperation(t *testing.T) {
	s, clk := newSim(t, Config{Count: 1, Latency: map[string]time.Duration{OpUpgradeMaster: time.Hour}})
	op := started(t)(s.UpgradeMaster(ctx, "sim-0001", "1.32.0"))

	done := make(chan pluginsdk.OperationReport)
	go func() {
		rep, err := s.WaitOperation(ctx, "sim-0001", op)
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	waitForWaiter(t, clk)
	clk.Step(30 * time.Minute)
	select {
	case rep := <-done:
		t.Fatalf("WaitOperation returned halfway: %+v", rep)
	case <-time.After(50 * time.Millisecond):
	}
	waitForWaiter(t, clk)
	clk.Step(30 * time.Minute)
	if rep := <-done; rep.Status != pluginsdk.OperationDone || rep.Message == "" {
		t.Errorf("WaitOperation: %+v", rep)
	}

	op = started(t)(s.UpgradeNodePool(ctx, "sim-0001", "pool-1", "1.31.5"))
	short, cancel := context.WithCancel(ctx)
	cancel()
	if rep, err := s.WaitOperation(short, "sim-0001", op); err != nil || rep.Status != pluginsdk.OperationDone {
		t.Errorf("WaitOperation of an operation without latency: %+v, %v", rep, err)
	}
	s2, _ := newSim(t, Config{Count: 1, Latency: map[string]time.Duration{OpServiceOut: time.Hour}})
	op = started(t)(s2.ServiceOut(ctx, "sim-0001"))
	if rep, err := s2.WaitOperation(short, "sim-0001", op); err != nil || rep.Status != pluginsdk.OperationRunning {
		t.Errorf("WaitOperation with an ended context: %+v, %v; want the running report", rep, err)
	}
}

func waitForWaiter(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("WaitOperation never slept on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}
