package metrics

import "github.com/prometheus/client_golang/prometheus"

// The fleet's metrics keep the multicluster upgrade operator's names, so
// its dashboards and alerts work on Upshift. They come twice: the
// operator's code registers multicluster_clusterversion_*, its README
// documents multicluster_controller_*, and users may have either.

var (
	// PluginCallSuccess and PluginCallFailed count calls to ops plugins by
	// request_type (the operator's: GetClusterStatus, GetOperationStatus,
	// GetClusterVersion, ServiceIn, ServiceOut, UpgradeMaster,
	// UpgradeNodePool; Upshift's: HealthCheck, DescribeOperation,
	// WaitOperation, RevertCluster), once per call whatever its retries.
	PluginCallSuccess = newFleetCounter("multicluster_clusterversion_success_plugin_call_total", "Successful calls to ops plugins, by request type.", "request_type")
	PluginCallFailed  = newFleetCounter("multicluster_clusterversion_failed_plugin_call_total", "Failed calls to ops plugins (after retries), by request type.", "request_type")
	// ControllerPluginCallSuccess and ControllerPluginCallFailed are the
	// same counts under the names the operator's README documents.
	ControllerPluginCallSuccess = newFleetCounter("multicluster_controller_success_plugin_call_total", "Successful calls to ops plugins, by request type (the multicluster operator's documented name).", "request_type")
	ControllerPluginCallFailed  = newFleetCounter("multicluster_controller_failed_plugin_call_total", "Failed calls to ops plugins (after retries), by request type (the multicluster operator's documented name).", "request_type")

	// OperationSuccess and OperationFailed count plugin operations the
	// fleet controller saw end, by operation (the plugin's Operation.type).
	OperationSuccess = newFleetCounter("multicluster_clusterversion_success_operation_total", "Plugin operations that ended DONE, by operation type.", "operation")
	OperationFailed  = newFleetCounter("multicluster_clusterversion_failed_operation_total", "Plugin operations that ended FAILED, by operation type.", "operation")
	// ControllerOperationSuccess and ControllerOperationFailed are the
	// same counts under the names the operator's README documents.
	ControllerOperationSuccess = newFleetCounter("multicluster_controller_success_operation_total", "Plugin operations that ended DONE, by operation type (the multicluster operator's documented name).", "operation")
	ControllerOperationFailed  = newFleetCounter("multicluster_controller_failed_operation_total", "Plugin operations that ended FAILED, by operation type (the multicluster operator's documented name).", "operation")
)

func newFleetCounter(name, help, label string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
}

// fleetCollectors are the counters above, for Register.
func fleetCollectors() []prometheus.Collector {
	return []prometheus.Collector{
		PluginCallSuccess, PluginCallFailed, ControllerPluginCallSuccess, ControllerPluginCallFailed,
		OperationSuccess, OperationFailed, ControllerOperationSuccess, ControllerOperationFailed,
	}
}

// PluginCall counts one call to a plugin under both names: a success when
// err is nil.
func PluginCall(requestType string, err error) {
	if err == nil {
		PluginCallSuccess.WithLabelValues(requestType).Inc()
		ControllerPluginCallSuccess.WithLabelValues(requestType).Inc()
		return
	}
	PluginCallFailed.WithLabelValues(requestType).Inc()
	ControllerPluginCallFailed.WithLabelValues(requestType).Inc()
}

// FleetOperation counts a plugin operation that ended, under both names:
// ok when it ended DONE, not when FAILED.
func FleetOperation(opType string, ok bool) {
	if ok {
		OperationSuccess.WithLabelValues(opType).Inc()
		ControllerOperationSuccess.WithLabelValues(opType).Inc()
		return
	}
	OperationFailed.WithLabelValues(opType).Inc()
	ControllerOperationFailed.WithLabelValues(opType).Inc()
}
