package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

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
