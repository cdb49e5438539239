package server

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, ready bool, unschedulable bool, pressure ...corev1.NodeConditionType) corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: unschedulable},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
	for _, p := range pressure {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: p, Status: corev1.ConditionTrue})
	}
	return n
}

// The host preflights judge what the nodes report: not Ready and
// pressure fail (strict), cordoned warns, each naming the nodes.
func TestHostChecks(t *testing.T) {
	for _, tc := range []struct {
		name             string
		nodes            []corev1.Node
		pass, warn, fail []string // messages
	}{
		{name: "healthy", nodes: []corev1.Node{node("a", true, false), node("b", true, false)},
			pass: []string{"all 2 nodes are Ready", "no node reports disk, memory or PID pressure", "no node is cordoned"}},
		{name: "one not Ready, one under pressure, one cordoned",
			nodes: []corev1.Node{node("c", true, true), node("b", true, false, corev1.NodeDiskPressure), node("a", false, false)},
			fail:  []string{"not Ready: a", "under pressure: b (DiskPressure)"}, warn: []string{"cordoned before the upgrade: c"}},
		{name: "no node", fail: []string{"the cluster reports no node"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := hostChecks(tc.nodes)
			for _, g := range []struct {
				got  []PreflightResult
				want []string
			}{{out.Pass, tc.pass}, {out.Warn, tc.warn}, {out.Fail, tc.fail}} {
				if len(g.got) != len(g.want) {
					t.Fatalf("got %+v, want %q", g.got, g.want)
				}
				for i := range g.got {
					if g.got[i].Message != g.want[i] {
						t.Errorf("got %q, want %q", g.got[i].Message, g.want[i])
					}
				}
			}
			for _, f := range out.Fail {
				if !f.Strict {
					t.Errorf("failure %q is not strict: it must block the start", f.Title)
				}
			}
		})
	}
}
