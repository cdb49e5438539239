package plugin

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/upshift-dev/upshift/internal/metrics"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Each call counts once, under both metric names, whatever its retries.
func TestMetricsOncePerCall(t *testing.T) {
	var attempts atomic.Int32
	impl := &fakePlugin{
		getClusterStatus: func(context.Context, string) (pluginsdk.ClusterStatus, error) {
			if attempts.Add(1) <= 2 {
				return pluginsdk.ClusterStatus{}, status.Error(codes.Unavailable, "busy")
			}
			return pluginsdk.ClusterStatus{Available: true}, nil
		},
		getVersion: func(context.Context, string) (pluginsdk.ClusterVersion, error) {
			return pluginsdk.ClusterVersion{}, status.Error(codes.ResourceExhausted, "rate limited")
		},
	}
	c := dial(t, Endpoint{Address: startPlugin(t, impl, pluginsdk.Insecure()), Insecure: true}, quick)

	type counters struct{ ok, failed []*prometheus.CounterVec }
	both := counters{
		ok:     []*prometheus.CounterVec{metrics.PluginCallSuccess, metrics.ControllerPluginCallSuccess},
		failed: []*prometheus.CounterVec{metrics.PluginCallFailed, metrics.ControllerPluginCallFailed},
	}
	for _, tc := range []struct {
		requestType string
		call        func() error
		ok          bool
	}{
		{"GetClusterStatus", func() error { _, err := c.GetClusterStatus(callCtx(t), "c1"); return err }, true},
		{"GetClusterVersion", func() error { _, err := c.GetVersion(callCtx(t), "c1"); return err }, false},
		{"ServiceIn", func() error { _, err := c.ServiceIn(callCtx(t), "c1"); return err }, true},
		{"HealthCheck", func() error { return c.HealthCheck(callCtx(t)) }, true},
		{"DescribeOperation", func() error { _, err := c.Describe(callCtx(t), "c1", pluginsdk.Operation{}); return err }, false},
	} {
		read := func(vs []*prometheus.CounterVec) []float64 {
			var v []float64
			for _, c := range vs {
				v = append(v, testutil.ToFloat64(c.WithLabelValues(tc.requestType)))
			}
			return v
		}
		okBefore, failedBefore := read(both.ok), read(both.failed)
		err := tc.call()
		if (err == nil) != tc.ok {
			t.Fatalf("%s: %v", tc.requestType, err)
		}
		wantOK, wantFailed := 1.0, 0.0
		if !tc.ok {
			wantOK, wantFailed = 0, 1
		}
		okAfter, failedAfter := read(both.ok), read(both.failed)
		for i := range okAfter {
			if okAfter[i]-okBefore[i] != wantOK || failedAfter[i]-failedBefore[i] != wantFailed {
				t.Errorf("%s (name set %d): success +%v, failed +%v; want +%v, +%v", tc.requestType, i,
					okAfter[i]-okBefore[i], failedAfter[i]-failedBefore[i], wantOK, wantFailed)
			}
		}
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("GetClusterStatus took %d attempts, want 3", n)
	}
}

// Upshift's own Capabilities probe is not a call the operator's plugin
// knows: a plugin that does not serve upshift.ops.v1 answers it
// Unimplemented, and that must not count as a failed plugin call (an
// alert on the failed-call counter would fire against a healthy
// plugin). Nor does it count as a success.
func TestCapabilitiesProbeIsNotCounted(t *testing.T) {
	c := dial(t, Endpoint{Address: startPlugin(t, &fakePlugin{}, pluginsdk.Insecure()), Insecure: true}, quick)
	counters := []*prometheus.CounterVec{metrics.PluginCallSuccess, metrics.PluginCallFailed,
		metrics.ControllerPluginCallSuccess, metrics.ControllerPluginCallFailed}
	before := make([]float64, len(counters))
	for i, cv := range counters {
		before[i] = testutil.ToFloat64(cv.WithLabelValues("Capabilities"))
	}
	caps, err := c.Capabilities(callCtx(t))
	if err != nil || caps != (Capabilities{}) {
		t.Fatalf("Capabilities of a plugin without upshift.ops.v1: %+v, %v; want none, no error", caps, err)
	}
	for i, cv := range counters {
		if d := testutil.ToFloat64(cv.WithLabelValues("Capabilities")) - before[i]; d != 0 {
			t.Errorf("counter %d counted the Capabilities probe: +%v", i, d)
		}
	}
}
