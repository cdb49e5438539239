package fleet

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// fleet reads a spec: "required=N revert member" on the command, then
// lines "cluster ID VERSION [k=v...]" and "wave NAME [clusters=a,b]
// [select=k=v] [max=N] [unavailable=N] [soak=D] [approval]". Every
// cluster starts at 1.30 with node pools p1 and p2, serving.
func (s *scenario) fleet(t *testing.T, d *datadriven.TestData) string {
	s.spec = v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 1, OnFailure: v1alpha1.FailureHalt}
	s.status = v1alpha1.ClusterVersionStatus{}
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "required":
			n, _ := strconv.Atoi(a.Vals[0])
			s.spec.RequiredAvailableCount = int32(n)
		case "revert":
			s.spec.OnFailure = v1alpha1.FailureRevert
		case "member":
			// What runs is the controller's business: the decider only
			// knows there is a member step.
			s.spec.Member = &v1alpha1.FleetMemberSpec{HealthChecks: []v1alpha1.Gate{{NodesReady: &v1alpha1.NodesReadyGate{}}}}
		}
	}
	var ids []string
	canRevert, canFind := d.HasArg("canrevert"), d.HasArg("canfind")
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		f := strings.Fields(line)
		switch f[0] {
		case "cluster":
			c := v1alpha1.FleetCluster{ID: f[1], Version: f[2], Labels: map[string]string{}}
			for _, kv := range f[3:] {
				k, v, _ := strings.Cut(kv, "=")
				c.Labels[k] = v
			}
			s.spec.Clusters = append(s.spec.Clusters, c)
			ids = append(ids, c.ID)
		case "wave":
			w := v1alpha1.Wave{Name: f[1]}
			for _, kv := range f[2:] {
				k, v, _ := strings.Cut(kv, "=")
				n, _ := strconv.Atoi(v)
				switch k {
				case "clusters":
					w.Clusters = strings.Split(v, ",")
				case "select":
					w.Selector = &metav1.LabelSelector{} // "select=": every cluster left
					if lk, lv, ok := strings.Cut(v, "="); ok {
						w.Selector.MatchLabels = map[string]string{lk: lv}
					}
				case "max":
					w.MaxConcurrency = int32(n)
				case "unavailable":
					u := int32(n)
					w.MaxUnavailable = &u
				case "soak":
					dur, err := time.ParseDuration(v)
					if err != nil {
						t.Fatal(err)
					}
					w.Soak = &metav1.Duration{Duration: dur}
				case "approval":
					w.Approval = true
				}
			}
			s.spec.Waves = append(s.spec.Waves, w)
		}
	}
	s.w = newWorld(ids, "1.30")
	s.w.canRevert, s.w.canFind = canRevert, canFind
	s.cache = NewStatusCache(time.Minute)
	s.generation = 1
	return s.compile()
}

func (s *scenario) compile() string {
	sp, err := Compile(s.spec)
	if err != nil {
		return "error: " + err.Error()
	}
	s.sp = sp
	var waves []string
	for w, ws := range sp.Waves {
		var m []string
		for _, i := range sp.members(w) {
			m = append(m, sp.Clusters[i].ID)
		}
		waves = append(waves, fmt.Sprintf("%s=[%s]", ws.Name, strings.Join(m, " ")))
	}
	return "waves " + strings.Join(waves, " ")
}
