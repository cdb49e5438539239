package fleet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

// forgetful is the sim, except that it answers NotFound about one
// cluster, as a cloud does about a cluster deleted behind the fleet.
type forgetful struct {
	*sim.Sim
	gone string
}

func (f forgetful) GetVersion(ctx context.Context, id string) (pluginsdk.ClusterVersion, error) {
	if id == f.gone {
		return pluginsdk.ClusterVersion{}, status.Errorf(codes.NotFound, "no cluster %s in this project", id)
	}
	return f.Sim.GetVersion(ctx, id)
}

func (f forgetful) GetClusterStatus(ctx context.Context, id string) (pluginsdk.ClusterStatus, error) {
	if id == f.gone {
		return pluginsdk.ClusterStatus{}, status.Errorf(codes.NotFound, "no cluster %s in this project", id)
	}
	return f.Sim.GetClusterStatus(ctx, id)
}

// A plugin that answers NotFound about one cluster is not down: the
// fleet marks that cluster (its message and the PluginReachable
// condition say what the plugin answered) and rolls the others.
func TestFleetMarksTheClusterThePluginAnsweredAbout(t *testing.T) {
	t.Parallel()
	e := newMgmtEnv(t, 3*time.Minute, "fleet-answers", "fleet-answers-runs")
	startController(t, e.mgmt, e.ns, e.runs)

	s := newSim(t, sim.Config{Count: 3, NodePools: 1, Version: "1.30.0"})
	ids := s.IDs()
	f := e.fleets()
	two := int32(2)
	f.apply("fleet", serveInsecure(t, forgetful{Sim: s, gone: ids[1]}), ids, func(sp *v1alpha1.ClusterVersionSpec) {
		sp.Waves = []v1alpha1.Wave{{Name: "all", Clusters: ids, MaxUnavailable: &two}}
	})

	var cv *v1alpha1.ClusterVersion
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		cv = f.get("fleet")
		if st := cv.Status; st.Done == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two clusters the plugin knows were not done within a minute: %+v", cv.Status)
		}
	}
	cond := meta.FindStatusCondition(cv.Status.Conditions, fleet.ConditionPluginReachable)
	if cond == nil || cond.Status != "True" || cond.Reason != "PluginAnsweredError" ||
		!strings.Contains(cond.Message, ids[1]+": GetClusterStatus with NotFound: no cluster "+ids[1]) {
		t.Errorf("PluginReachable %+v; want True, PluginAnsweredError, naming %s and the plugin's NotFound", cond, ids[1])
	}
	for i, e := range cv.Status.Clusters {
		switch {
		case i == 1 && (e.Phase != v1alpha1.ClusterPending || !strings.Contains(e.Message, "the ops plugin answered GetClusterStatus with NotFound: no cluster")):
			t.Errorf("%s: %s (%s); want Pending, its message saying what the plugin answered", e.ID, e.Phase, e.Message)
		case i != 1 && e.Phase != v1alpha1.ClusterDone:
			t.Errorf("%s: %s; want Done", e.ID, e.Phase)
		}
	}
	if n := s.Calls(ids[1]); n != 0 {
		t.Errorf("%s: %d calls reached the sim; want none (its reads answered NotFound, nothing started)", ids[1], n)
	}
}
