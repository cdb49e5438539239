package fleet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// set changes the world: "set ID [in=false] [available=false]
// [master=V]", or "set down" / "set up" for the plugin.
func (s *scenario) set(t *testing.T, d *datadriven.TestData) string {
	switch d.CmdArgs[0].Key {
	case "down":
		s.w.down = true
		return "ok"
	case "up":
		s.w.down = false
		return "ok"
	case "lose":
		s.w.lose = v1alpha1.FleetAction(d.CmdArgs[0].Vals[0])
		return "ok"
	}
	c := s.w.clusters[d.CmdArgs[0].Key]
	for _, a := range d.CmdArgs[1:] {
		switch a.Key {
		case "in":
			c.in = a.Vals[0] == "true"
		case "available":
			c.avail = a.Vals[0] == "true"
		case "gone":
			c.gone = a.Vals[0] == "true"
		case "master":
			c.master = a.Vals[0]
		case "pools":
			for i := range c.pools {
				c.pools[i].Version = a.Vals[0]
			}
		default:
			t.Fatalf("set: unknown %s", a.Key)
		}
	}
	s.w.note()
	return s.w.describe(d.CmdArgs[0].Key)
}

// finish ends the running operations of the given clusters (all when
// none is given): done with its effect, or failed with the message after
// "--".
func (s *scenario) finish(d *datadriven.TestData, status pluginsdk.OperationStatus) string {
	var out []string
	for _, o := range s.w.running(args(d)...) {
		if status == pluginsdk.OperationDone {
			s.w.finish(o)
		} else {
			o.status, o.msg = status, strings.TrimSpace(d.Input)
		}
		out = append(out, fmt.Sprintf("%s %s %s", o.cluster, o.action, statusName(o.status)))
	}
	if len(out) == 0 {
		return "nothing running"
	}
	return strings.Join(out, "\n")
}

func statusName(s pluginsdk.OperationStatus) string {
	return map[pluginsdk.OperationStatus]string{pluginsdk.OperationDone: "done", pluginsdk.OperationFailed: "failed"}[s]
}

func args(d *datadriven.TestData) []string {
	var ids []string
	for _, a := range d.CmdArgs {
		ids = append(ids, a.Key)
	}
	return ids
}
