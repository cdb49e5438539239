package pluginsdk

import (
	"github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
	opsv1 "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/upshift/ops/v1"
)

// Conversions between this package's types and the generated messages,
// used by Serve and by Go clients of plugins (Upshift's own).

// WireClusterVersion is v as plugin.ClusterVersion; the wire repeats the
// cluster's ID in the master and in every node pool.
func WireClusterVersion(clusterID string, v ClusterVersion) *plugin.ClusterVersion {
	w := &plugin.ClusterVersion{Master: &plugin.MasterVersion{ClusterID: clusterID, Version: v.Master}}
	for _, np := range v.NodePools {
		w.NodePools = append(w.NodePools, &plugin.NodePoolVersion{ClusterID: clusterID, NodePoolID: np.ID, Version: np.Version})
	}
	return w
}

// ClusterVersionFromWire is the inverse of WireClusterVersion (a missing
// master is an empty version).
func ClusterVersionFromWire(w *plugin.ClusterVersion) ClusterVersion {
	v := ClusterVersion{Master: w.GetMaster().GetVersion()}
	for _, np := range w.GetNodePools() {
		v.NodePools = append(v.NodePools, NodePoolVersion{ID: np.GetNodePoolID(), Version: np.GetVersion()})
	}
	return v
}

// WireOperation is op as plugin.Operation.
func WireOperation(op Operation) *plugin.Operation {
	return &plugin.Operation{Type: op.Type, OperationID: op.ID}
}

// OperationFromWire is the inverse of WireOperation.
func OperationFromWire(w *plugin.Operation) Operation {
	return Operation{Type: w.GetType(), ID: w.GetOperationID()}
}

// WireClusterStatus is s as plugin.ClusterStatus.
func WireClusterStatus(s ClusterStatus) *plugin.ClusterStatus {
	return &plugin.ClusterStatus{Status: plugin.ClusterStatusType(s.Service), IsAvailable: s.Available}
}

// ClusterStatusFromWire is the inverse of WireClusterStatus.
func ClusterStatusFromWire(w *plugin.ClusterStatus) ClusterStatus {
	return ClusterStatus{Service: ServiceState(w.GetStatus()), Available: w.GetIsAvailable()}
}

// WireOperationReport is r as upshift.ops.v1.OperationReport.
func WireOperationReport(r OperationReport) *opsv1.OperationReport {
	return &opsv1.OperationReport{Status: plugin.OperationStatusType(r.Status), Message: r.Message, Done: r.Done, Total: r.Total}
}

// OperationReportFromWire is the inverse of WireOperationReport.
func OperationReportFromWire(w *opsv1.OperationReport) OperationReport {
	return OperationReport{Status: OperationStatus(w.GetStatus()), Message: w.GetMessage(), Done: w.GetDone(), Total: w.GetTotal()}
}
