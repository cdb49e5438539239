package pluginsdk

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The conversions are each other's inverse.
func TestConvertRoundTrip(t *testing.T) {
	v := ClusterVersion{Master: "1.32.1", NodePools: []NodePoolVersion{{ID: "a", Version: "1.31.4"}, {ID: "b", Version: "1.32.1"}}}
	if got := ClusterVersionFromWire(WireClusterVersion("c1", v)); !cmp.Equal(got, v) {
		t.Errorf("ClusterVersion: %s", cmp.Diff(v, got))
	}
	op := Operation{Type: "UpgradeNodePool", ID: "op-9"}
	if got := OperationFromWire(WireOperation(op)); got != op {
		t.Errorf("Operation: %+v", got)
	}
	st := ClusterStatus{Service: ServiceOut, Available: true}
	if got := ClusterStatusFromWire(WireClusterStatus(st)); got != st {
		t.Errorf("ClusterStatus: %+v", got)
	}
	rep := OperationReport{Status: OperationFailed, Message: "quota", Done: 1, Total: 4}
	if got := OperationReportFromWire(WireOperationReport(rep)); got != rep {
		t.Errorf("OperationReport: %+v", got)
	}
	if got := ClusterVersionFromWire(nil); got.Master != "" || got.NodePools != nil {
		t.Errorf("a nil ClusterVersion: %+v", got)
	}
}
