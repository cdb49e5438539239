package sim

import (
	"context"
	"testing"
	"time"

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
