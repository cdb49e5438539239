package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

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
