package engine

import (
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// An envKept gate is named by its workload, container and variables
// (names only: a gate holds no values); a long list is counted.
func TestEnvKeptGateName(t *testing.T) {
	g := v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: "liqo", Name: "liqo-controller-manager", Container: "controller-manager"}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{nil, "envKept deployment liqo/liqo-controller-manager container controller-manager: every variable"},
		{[]string{"POD_NAMESPACE", "CLUSTER_ID", "TENANT_NAMESPACE", "CLUSTER_ROLE", "ENABLE_IPAM", "LOG_LEVEL"},
			"envKept deployment liqo/liqo-controller-manager container controller-manager: POD_NAMESPACE, CLUSTER_ID, TENANT_NAMESPACE, CLUSTER_ROLE, ENABLE_IPAM, LOG_LEVEL"},
		{[]string{"A", "B", "C", "D", "E", "F", "G", "H"},
			"envKept deployment liqo/liqo-controller-manager container controller-manager: A, B, C, D, E and 3 more"},
	} {
		g.Names = tc.names
		if got := GateName(v1alpha1.Gate{EnvKept: &g}, 0); got != tc.want {
			t.Errorf("GateName = %q\nwant %q", got, tc.want)
		}
	}
}
