package helmreleases

import (
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestJudge(t *testing.T) {
	rels := []helmx.ReleaseInfo{
		{Name: "cilium", Namespace: "cozy-cilium", Revision: 3, Status: helmx.StatusDeployed},
		{Name: "kubeovn", Namespace: "cozy-kubeovn", Revision: 2, Status: helmx.StatusFailed, Description: "Upgrade \"kubeovn\" failed: timed out"},
		{Name: "ingress", Namespace: "cozy-ingress", Revision: 5, Status: helmx.StatusPendingUpgrade},
	}
	for _, tt := range []struct {
		name string
		spec v1alpha1.HelmReleasesGate
		ok   bool
		says []string
	}{
		{name: "every release", ok: false, says: []string{"2 of 3 Helm release(s) not deployed", `cozy-kubeovn/kubeovn revision 2 is failed (Upgrade "kubeovn" failed: timed out)`, "cozy-ingress/ingress revision 5 is pending-upgrade"}},
		{name: "the ones named", spec: v1alpha1.HelmReleasesGate{Names: []string{"cozy-cilium/cilium"}}, ok: true, says: []string{"1 Helm release(s) deployed"}},
		{name: "a named release missing", spec: v1alpha1.HelmReleasesGate{Names: []string{"cozy-cilium/cilium", "cozy-x/x"}}, says: []string{"cozy-x/x: not found"}},
		{name: "a name in the namespace", spec: v1alpha1.HelmReleasesGate{Namespace: "cozy-cilium", Names: []string{"cilium"}}, ok: true},
		{name: "none found passes", spec: v1alpha1.HelmReleasesGate{Namespace: "empty"}, ok: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := rels
			if tt.spec.Namespace == "empty" {
				in = nil
			}
			res := Judge(in, tt.spec)
			if (res.Status == step.Succeeded) != tt.ok {
				t.Fatalf("Judge = %+v, want ok %v", res, tt.ok)
			}
			for _, s := range tt.says {
				if !strings.Contains(res.Message, s) {
					t.Errorf("message %q lacks %q", res.Message, s)
				}
			}
		})
	}
}
