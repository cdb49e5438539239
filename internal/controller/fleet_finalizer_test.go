package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The event of a deleted fleet names the plugin operations it left in
// flight (a Warning: nobody follows them any more), not its member
// operations, which were stopped and are named as such.
func TestReleasedNamesWhatIsLeftInFlight(t *testing.T) {
	op := func(a v1alpha1.FleetAction, id string) *v1alpha1.PluginOperation {
		return &v1alpha1.PluginOperation{ID: id, Action: a}
	}
	st := v1alpha1.ClusterVersionStatus{Clusters: []v1alpha1.FleetClusterStatus{
		{ID: "a", Operation: op(v1alpha1.ActionUpgradeMember, "UpgradeMember/a/fleet-x")},
		{ID: "b", Operation: op(v1alpha1.ActionUpgradeNodePool, "op-7")},
		{ID: "c"},
	}}
	kind, msg := released([]string{"a (run fleet-x)"}, st)
	if kind != corev1.EventTypeWarning {
		t.Errorf("kind %s, want Warning: an operation goes on", kind)
	}
	for _, want := range []string{"a (run fleet-x)", "cluster b UpgradeNodePool (operation op-7)", "cannot be cancelled"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "cluster a ") {
		t.Errorf("%q names the member operation as left in flight", msg)
	}
	st.Clusters[1].Operation = nil
	if kind, msg := released(nil, st); kind != corev1.EventTypeNormal || !strings.Contains(msg, "no plugin operation was in flight") {
		t.Errorf("nothing left: %s %q, want Normal, saying so", kind, msg)
	}
}
