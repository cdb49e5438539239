package sim

import (
	"sync"
	"testing"
	"time"
)

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
