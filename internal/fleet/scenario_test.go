package fleet

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// The scripted scenarios in testdata/*.txt drive Step against a world
// whose operations end only when the script says. Rewrite the expected
// output after an intended change with: go test ./internal/fleet -rewrite
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		datadriven.RunTest(t, path, s.handle)
	})
}

type scenario struct {
	spec       v1alpha1.ClusterVersionSpec
	sp         Spec
	generation int64
	status     v1alpha1.ClusterVersionStatus
	w          *world
	cache      *StatusCache
	now        time.Time
}

func (s *scenario) handle(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "fleet":
		return s.fleet(t, d)
	case "step":
		return s.step(t, d)
	case "run":
		return s.run(t, d)
	case "finish":
		return s.finish(d, pluginsdk.OperationDone)
	case "fail":
		return s.finish(d, pluginsdk.OperationFailed)
	case "drop":
		// The next call of the action never reaches the plugin.
		s.w.drop = v1alpha1.FleetAction(d.CmdArgs[0].Key)
		return "ok"
	case "forget":
		for _, o := range s.w.running(args(d)...) {
			delete(s.w.ops, o.id)
		}
		return "ok"
	case "set":
		return s.set(t, d)
	case "advance":
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			t.Fatal(err)
		}
		s.now = s.now.Add(dur)
		return "ok"
	case "restart":
		// What a new controller process has: the saved status, nothing
		// of the old process's memory.
		b, err := json.Marshal(s.status)
		if err != nil {
			t.Fatal(err)
		}
		s.status = v1alpha1.ClusterVersionStatus{}
		if err := json.Unmarshal(b, &s.status); err != nil {
			t.Fatal(err)
		}
		s.cache = NewStatusCache(time.Minute)
		return "ok"
	case "edit":
		for _, a := range d.CmdArgs {
			if a.Key == "onFailure" {
				s.spec.OnFailure = v1alpha1.FailurePolicy(a.Vals[0])
				continue
			}
			for i := range s.spec.Clusters {
				if s.spec.Clusters[i].ID == a.Key || a.Key == "all" {
					s.spec.Clusters[i].Version = a.Vals[0]
				}
			}
		}
		s.generation++
		return s.compile()
	case "status":
		return s.print(true)
	case "suspend", "resume":
		// Every change of the spec is a new generation, as the API
		// server makes it.
		s.spec.Suspend = d.Cmd == "suspend"
		s.generation++
		return s.compile()
	case "started":
		// The operations the plugin started, by cluster and action: a
		// call sent twice shows as 2.
		var out []string
		for k, n := range s.w.started {
			out = append(out, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	case "world":
		var out []string
		for _, c := range s.spec.Clusters {
			out = append(out, s.w.describe(c.ID))
		}
		out = append(out, fmt.Sprintf("fewest serving: %d", s.w.minServing))
		return strings.Join(out, "\n")
	}
	t.Fatalf("unknown command %s", d.Cmd)
	return ""
}
