package metrics

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A plugin call and an operation count once under each of the two names.
func TestFleetCountersBothNames(t *testing.T) {
	count := func(c *prometheus.CounterVec, label string) func() float64 {
		return func() float64 { return testutil.ToFloat64(c.WithLabelValues(label)) }
	}
	for _, tc := range []struct {
		name    string
		do      func()
		changed []func() float64
		same    []func() float64
	}{
		{"call ok", func() { PluginCall("ServiceOut", nil) },
			[]func() float64{count(PluginCallSuccess, "ServiceOut"), count(ControllerPluginCallSuccess, "ServiceOut")},
			[]func() float64{count(PluginCallFailed, "ServiceOut"), count(ControllerPluginCallFailed, "ServiceOut")}},
		{"call failed", func() { PluginCall("GetClusterVersion", errors.New("unavailable")) },
			[]func() float64{count(PluginCallFailed, "GetClusterVersion"), count(ControllerPluginCallFailed, "GetClusterVersion")},
			[]func() float64{count(PluginCallSuccess, "GetClusterVersion"), count(ControllerPluginCallSuccess, "GetClusterVersion")}},
		{"operation done", func() { FleetOperation("UpgradeMaster", true) },
			[]func() float64{count(OperationSuccess, "UpgradeMaster"), count(ControllerOperationSuccess, "UpgradeMaster")},
			[]func() float64{count(OperationFailed, "UpgradeMaster"), count(ControllerOperationFailed, "UpgradeMaster")}},
		{"operation failed", func() { FleetOperation("UpgradeNodePool", false) },
			[]func() float64{count(OperationFailed, "UpgradeNodePool"), count(ControllerOperationFailed, "UpgradeNodePool")},
			[]func() float64{count(OperationSuccess, "UpgradeNodePool"), count(ControllerOperationSuccess, "UpgradeNodePool")}},
	} {
		before := func(fs []func() float64) []float64 {
			var v []float64
			for _, f := range fs {
				v = append(v, f())
			}
			return v
		}
		changed, same := before(tc.changed), before(tc.same)
		tc.do()
		for i, f := range tc.changed {
			if d := f() - changed[i]; d != 1 {
				t.Errorf("%s: counter %d moved by %v, want 1", tc.name, i, d)
			}
		}
		for i, f := range tc.same {
			if d := f() - same[i]; d != 0 {
				t.Errorf("%s: the other outcome's counter %d moved by %v", tc.name, i, d)
			}
		}
	}
}

// Both name sets are exported, with the operator's labels (Register
// registers once per process: TestRegister checks it adds these).
func TestFleetNames(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(fleetCollectors()...)
	PluginCall("HealthCheck", nil)
	FleetOperation("ServiceIn", true)
	want := map[string]string{
		"multicluster_clusterversion_success_plugin_call_total": "request_type",
		"multicluster_controller_success_plugin_call_total":     "request_type",
		"multicluster_clusterversion_success_operation_total":   "operation",
		"multicluster_controller_success_operation_total":       "operation",
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		label, ok := want[mf.GetName()]
		if !ok {
			continue
		}
		delete(want, mf.GetName())
		if l := mf.GetMetric()[0].GetLabel(); len(l) != 1 || l[0].GetName() != label {
			t.Errorf("%s labels %v, want only %s", mf.GetName(), l, label)
		}
	}
	for name := range want {
		t.Errorf("%s is not registered", name)
	}
}
