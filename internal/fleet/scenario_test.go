package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// step runs one Step: "step [approve=WAVE] [retry] [killed]". killed:
// the controller dies after the step's calls, before it saves their
// answers: what is saved is the intent (Inputs.Intend).
func (s *scenario) step(t *testing.T, d *datadriven.TestData) string {
	saved := s.status
	in := Inputs{Generation: s.generation, Now: func() time.Time { return s.now }, Statuses: s.cache,
		Intend: func(_ context.Context, st v1alpha1.ClusterVersionStatus) error { saved = *st.DeepCopy(); return nil }}
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "approve":
			in.Approve = a.Vals[0]
		case "retry":
			in.Retry = "1"
		}
	}
	before := s.status
	res, err := Step(context.Background(), s.w, s.sp, s.status, in)
	s.status = res.Status
	if d.HasArg("killed") {
		s.status = saved
	}
	var out []string
	if err != nil {
		out = append(out, "error: "+err.Error())
	}
	out = append(out, calls(before, res)...)
	for _, e := range res.Events {
		kind := "Normal"
		if e.Warning {
			kind = "Warning"
		}
		out = append(out, fmt.Sprintf("event %s %s: %s", kind, e.Reason, e.Message))
	}
	line := s.print(false)
	if res.RequeueAfter > 0 {
		line += " requeue=" + res.RequeueAfter.String()
	}
	return strings.Join(append(out, line), "\n")
}

// calls lists the operations the step started.
func calls(before v1alpha1.ClusterVersionStatus, res Result) []string {
	// An operation is known by its request id (its intent's, before
	// the plugin's answer gave it an id) or, without one, by its id.
	key := func(op *v1alpha1.PluginOperation) string {
		if op.RequestID != "" {
			return op.RequestID
		}
		return op.ID
	}
	known := map[string]bool{}
	for _, e := range before.Clusters {
		if e.Operation != nil {
			known[key(e.Operation)] = true
		}
	}
	var out []string
	for _, e := range res.Status.Clusters {
		if op := e.Operation; op != nil && !known[key(op)] {
			target := op.Version
			if op.NodePool != "" {
				target = op.NodePool + "@" + target
			}
			out = append(out, strings.TrimSpace(fmt.Sprintf("call %s %s %s", e.ID, op.Action, target)))
		}
	}
	return out
}

// run steps and finishes every operation until the fleet stops moving:
// "run [max=N]" (default 50 steps). It prints each step's calls and
// events, then the end state and the fewest clusters that served.
func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	limit := 50
	if d.HasArg("max") {
		d.ScanArgs(t, "max", &limit)
	}
	var out []string
	for i := 0; i < limit; i++ {
		before := s.status
		res, err := Step(context.Background(), s.w, s.sp, s.status, Inputs{Generation: s.generation, Now: func() time.Time { return s.now }, Statuses: s.cache})
		s.status = res.Status
		if err != nil {
			out = append(out, "error: "+err.Error())
			break
		}
		lines := calls(before, res)
		for _, e := range res.Events {
			lines = append(lines, "event "+e.Reason+": "+e.Message)
		}
		out = append(out, lines...)
		// Step again only when the controller would: an operation ends
		// (the plugin's wait wakes it) or the step asked to be requeued.
		// A fleet that is not done and has neither is stalled.
		running := s.w.running()
		if len(running) == 0 && res.RequeueAfter == 0 {
			if !terminal(s.status.Phase) {
				out = append(out, "stalled: no operation in flight and no requeue")
			}
			break
		}
		if i == limit-1 {
			break
		}
		for _, o := range running {
			s.w.finish(o)
		}
		s.now = s.now.Add(time.Second)
	}
	out = append(out, s.print(true), fmt.Sprintf("fewest serving: %d", s.w.minServing))
	return strings.Join(out, "\n")
}

// print says the fleet's phase and counts, and with clusters each
// cluster's line.
func (s *scenario) print(clusters bool) string {
	st := s.status
	line := fmt.Sprintf("phase=%s wave=%s done=%d/%d available=%d", st.Phase, st.Wave, st.Done, st.Desired, st.Available)
	if !clusters {
		return line
	}
	out := []string{line}
	if st.Message != "" {
		out = append(out, "message: "+st.Message)
	}
	if c := meta.FindStatusCondition(st.Conditions, ConditionPluginReachable); c != nil && (c.Status == metav1.ConditionFalse || c.Reason == "PluginAnsweredError") {
		out = append(out, "plugin: "+c.Message)
	}
	for _, e := range st.Clusters {
		l := fmt.Sprintf("  %s %s master=%s in=%t", e.ID, e.Phase, e.Master, e.InService)
		if e.Operation != nil {
			l += fmt.Sprintf(" op=%s/%s", e.Operation.Action, e.Operation.ID)
		}
		if e.Previous != nil {
			l += " previous=" + e.Previous.Master
		}
		if e.Member != nil {
			l += fmt.Sprintf(" member=%s/%s", e.Member.Run, e.Member.Phase)
		}
		if e.Message != "" {
			l += " (" + e.Message + ")"
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// terminal phases wait for a person or an edit, not for a requeue.
func terminal(p v1alpha1.FleetPhase) bool {
	switch p {
	case v1alpha1.FleetSucceeded, v1alpha1.FleetHalted, v1alpha1.FleetReverted, v1alpha1.FleetRevertFailed,
		v1alpha1.FleetWaitingForApproval, v1alpha1.FleetSuspended:
		return true
	}
	return false
}
