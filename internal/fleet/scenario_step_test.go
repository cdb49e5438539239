package fleet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

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
