package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

func newSim(t *testing.T, cfg Config) (*Sim, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	cfg.Clock = clk
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

func opStatus(t *testing.T, s *Sim, id string, op pluginsdk.Operation) pluginsdk.OperationStatus {
	t.Helper()
	st, err := s.GetOperationStatus(ctx, id, op)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func versionOf(t *testing.T, s *Sim, id string) pluginsdk.ClusterVersion {
	t.Helper()
	v, err := s.GetVersion(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// started is the operation a call started, failing the test on an error:
// started(t)(s.ServiceOut(ctx, id)).
func started(t *testing.T) func(pluginsdk.Operation, error) pluginsdk.Operation {
	return func(op pluginsdk.Operation, err error) pluginsdk.Operation {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
}

// Count clusters named sim-0001..., each with two node pools at the
// default version, in service.
func TestGeneratedClusters(t *testing.T) {
	s, _ := newSim(t, Config{Count: 3})
	if got := s.IDs(); !cmp.Equal(got, []string{"sim-0001", "sim-0002", "sim-0003"}) {
		t.Errorf("IDs %v", got)
	}
	want := pluginsdk.ClusterVersion{Master: DefaultVersion, NodePools: []pluginsdk.NodePoolVersion{{ID: "pool-1", Version: DefaultVersion}, {ID: "pool-2", Version: DefaultVersion}}}
	if got := versionOf(t, s, "sim-0002"); !cmp.Equal(got, want) {
		t.Errorf("GetVersion: %s", cmp.Diff(want, got))
	}
	st, err := s.GetClusterStatus(ctx, "sim-0003")
	if err != nil || st != (pluginsdk.ClusterStatus{Service: pluginsdk.ServiceIn, Available: true}) {
		t.Errorf("GetClusterStatus: %+v, %v", st, err)
	}
	if _, err := s.GetVersion(ctx, "sim-0004"); status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "sim-0001 … sim-0003") {
		t.Errorf("GetVersion of an unknown cluster: %v", err)
	}
}

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

// Failure rules fail matching operations after After of them, Times
// times; a failed operation has no effect and says why.
func TestFailureRules(t *testing.T) {
	s, _ := newSim(t, Config{Count: 2, Failures: []Failure{{Operation: OpServiceOut, Cluster: "sim-0002", After: 1, Times: 1}}})
	var got []pluginsdk.OperationStatus
	for i := 0; i < 3; i++ {
		op := started(t)(s.ServiceOut(ctx, "sim-0002"))
		got = append(got, opStatus(t, s, "sim-0002", op))
		if i == 1 {
			rep, _ := s.DescribeOperation(ctx, "sim-0002", op)
			if !strings.Contains(rep.Message, "injected failure") || !strings.Contains(rep.Message, "ServiceOut on sim-0002 after 1, 1 times") {
				t.Errorf("failed operation's message: %q", rep.Message)
			}
		}
		if _, err := s.ServiceIn(ctx, "sim-0002"); err != nil {
			t.Fatal(err)
		}
	}
	want := []pluginsdk.OperationStatus{pluginsdk.OperationDone, pluginsdk.OperationFailed, pluginsdk.OperationDone}
	if !cmp.Equal(got, want) {
		t.Errorf("ServiceOut on sim-0002: %v, want %v", got, want)
	}
	op := started(t)(s.ServiceOut(ctx, "sim-0001"))
	if opStatus(t, s, "sim-0001", op) != pluginsdk.OperationDone {
		t.Error("the rule failed another cluster's operation")
	}

	failing, _ := newSim(t, Config{Count: 1, Failures: []Failure{{Operation: OpUpgradeMaster}}})
	op = started(t)(failing.UpgradeMaster(ctx, "sim-0001", "1.32.0"))
	if opStatus(t, failing, "sim-0001", op) != pluginsdk.OperationFailed || versionOf(t, failing, "sim-0001").Master != DefaultVersion {
		t.Error("a failed upgrade changed the control plane, or did not fail")
	}

	if _, err := New(Config{Count: 3, Failures: []Failure{{Operation: OpUpgradeNodePool, Cluster: "sim-0009"}}}); err == nil || !strings.Contains(err.Error(), "no such cluster") {
		t.Errorf("a rule for an unknown cluster: %v", err)
	}
}

// The failure rate fails about that share of operations, the same ones
// for the same seed.
func TestFailureRate(t *testing.T) {
	run := func(seed uint64) []bool {
		s, _ := newSim(t, Config{Count: 1, FailureRate: 0.3, Seed: seed})
		var failed []bool
		for i := 0; i < 1000; i++ {
			op := started(t)(s.ServiceIn(ctx, "sim-0001"))
			failed = append(failed, opStatus(t, s, "sim-0001", op) == pluginsdk.OperationFailed)
		}
		return failed
	}
	a, b := run(7), run(7)
	if !cmp.Equal(a, b) {
		t.Error("the same seed failed other operations")
	}
	n := 0
	for _, f := range a {
		if f {
			n++
		}
	}
	if n < 240 || n > 360 {
		t.Errorf("%d of 1000 failed at rate 0.3", n)
	}
}

// Flaps make clusters unavailable for Down at a time, repeatably.
func TestFlaps(t *testing.T) {
	cfg := Config{Count: 20, Flaps: Flaps{Every: time.Minute, Down: 10 * time.Second, Probability: 0.5}, Seed: 3}
	sample := func() [][]bool {
		s, clk := newSim(t, cfg)
		var out [][]bool
		for step := 0; step < 60; step++ { // ten minutes, every 10 s
			var row []bool
			for _, id := range s.IDs() {
				st, err := s.GetClusterStatus(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				row = append(row, st.Available)
			}
			out = append(out, row)
			clk.Step(10 * time.Second)
		}
		return out
	}
	a := sample()
	if !cmp.Equal(a, sample()) {
		t.Error("the same seed flapped otherwise")
	}
	down := 0
	for _, row := range a {
		for _, avail := range row {
			if !avail {
				down++
			}
		}
	}
	// 20 clusters × 10 windows × p 0.5 × 10 s of 60 s: about 1 or 2
	// samples each time a cluster flaps
	if down < 50 || down > 250 {
		t.Errorf("%d of %d samples unavailable", down, 60*20)
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

// Calls are counted per cluster and in total.
func TestCalls(t *testing.T) {
	s, _ := newSim(t, Config{Count: 2})
	_ = s.HealthCheck(ctx)
	_, _ = s.GetVersion(ctx, "sim-0001")
	_, _ = s.GetClusterStatus(ctx, "sim-0001")
	_, _ = s.ServiceOut(ctx, "sim-0002")
	_, _ = s.GetVersion(ctx, "nope")
	if s.Calls("sim-0001") != 2 || s.Calls("sim-0002") != 1 || s.TotalCalls() != 5 {
		t.Errorf("calls: sim-0001 %d, sim-0002 %d, total %d", s.Calls("sim-0001"), s.Calls("sim-0002"), s.TotalCalls())
	}
}

// Thousands of clusters, called from many goroutines, with operations in
// flight: safe (go test -race), and every operation settles.
func TestManyClustersConcurrently(t *testing.T) {
	s, clk := newSim(t, Config{Count: 2000, Latency: map[string]time.Duration{OpUpgradeMaster: time.Minute, OpUpgradeNodePool: time.Minute}, Jitter: time.Second})
	var wg sync.WaitGroup
	ids := s.IDs()
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(ids); i += 8 {
				if _, err := s.UpgradeMaster(ctx, ids[i], "1.32.0"); err != nil {
					t.Error(err)
				}
				_, _ = s.GetClusterStatus(ctx, ids[i])
			}
		}(w)
	}
	wg.Wait()
	clk.Step(time.Minute + time.Second)
	for _, id := range ids {
		if v := versionOf(t, s, id); v.Master != "1.32.0" {
			t.Fatalf("%s at %s after its upgrade", id, v.Master)
		}
	}
	if s.TotalCalls() != 3*len(ids) {
		t.Errorf("%d calls, want %d", s.TotalCalls(), 3*len(ids))
	}
}

// Configurations that cannot be simulated are refused, naming the field.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Latency: map[string]time.Duration{"Upgrade": time.Second}}, `latency of "Upgrade"`},
		{Config{Failures: []Failure{{Operation: "Reboot"}}}, `failure of "Reboot"`},
		{Config{FailureRate: 2}, "failure rate"},
		{Config{Flaps: Flaps{Every: time.Second, Down: time.Minute, Probability: 0.1}}, "Down no longer than Every"},
		{Config{Version: "one"}, `version "one"`},
		{Config{Clusters: []ClusterSpec{{ID: "a", Master: "1.30.0", NodePools: []pluginsdk.NodePoolVersion{{ID: "p", Version: "1.31.0"}}}}}, "newer than its control plane"},
		{Config{Clusters: []ClusterSpec{{ID: "a", Master: "1.30.0"}, {ID: "a", Master: "1.30.0"}}}, "given twice"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error saying %s", tc.cfg, err, tc.want)
		}
	}
}

func ExampleNew() {
	s, err := New(Config{Count: 3, Latency: map[string]time.Duration{OpUpgradeMaster: 0}})
	if err != nil {
		panic(err)
	}
	op, _ := s.UpgradeMaster(context.Background(), "sim-0002", "1.32.0")
	st, _ := s.GetOperationStatus(context.Background(), "sim-0002", op)
	v, _ := s.GetVersion(context.Background(), "sim-0002")
	fmt.Println(op.Type, st == pluginsdk.OperationDone, v.Master)
	// Output: UpgradeMaster true 1.32.0
}
