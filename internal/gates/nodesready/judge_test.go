package nodesready

import (
	"github.com/upshift-dev/upshift/internal/watchloop"

	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// node builds a node whose Ready condition has the status (none when
// empty); reason and message go with a status other than True.
func node(name string, status corev1.ConditionStatus, reasonMessage ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if status == "" {
		return n
	}
	c := corev1.NodeCondition{Type: corev1.NodeReady, Status: status}
	if len(reasonMessage) == 2 {
		c.Reason, c.Message = reasonMessage[0], reasonMessage[1]
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, c}
	return n
}

func TestJudge(t *testing.T) {
	const (
		T = corev1.ConditionTrue
		F = corev1.ConditionFalse
		U = corev1.ConditionUnknown
	)
	type look struct {
		nodes []*corev1.Node
		want  watchloop.Verdict
	}
	tests := []struct {
		name     string
		selector string
		minReady int
		looks    []look // the first is the first complete list
	}{
		{name: "all Ready", looks: []look{{
			nodes: []*corev1.Node{node("b", T), node("a", T), node("c", T)},
			want:  watchloop.Passed("3 of 3 nodes Ready"),
		}}},
		{name: "one node of a pool", selector: "pool=gpu", looks: []look{{
			nodes: []*corev1.Node{node("gpu-0", T)},
			want:  watchloop.Passed(`1 of 1 node matching "pool=gpu" Ready`),
		}}},
		{name: "waits for NotReady nodes, naming them with their reasons", looks: []look{
			{nodes: []*corev1.Node{node("c", F, "KubeletNotReady", "container runtime is down"), node("a", T), node("b", U, "NodeStatusUnknown", "Kubelet stopped posting node status.")},
				want: watchloop.Waiting("1 of 3 nodes Ready; NotReady: b (Ready=Unknown: NodeStatusUnknown: Kubelet stopped posting node status.); c (Ready=False: KubeletNotReady: container runtime is down)")},
			{nodes: []*corev1.Node{node("c", T), node("a", T), node("b", T)}, want: watchloop.Passed("3 of 3 nodes Ready")},
		}},
		{name: "a new node without a Ready condition is waited for", looks: []look{{
			nodes: []*corev1.Node{node("a", T), node("new", "")},
			want:  watchloop.Waiting("1 of 2 nodes Ready; NotReady: new (no Ready condition yet)"),
		}}},
		{name: "minReady met with a node NotReady", minReady: 2, looks: []look{{
			nodes: []*corev1.Node{node("a", T), node("b", T), node("c", F)},
			want:  watchloop.Passed("2 of 3 nodes Ready, at least 2 required; NotReady: c (Ready=False)"),
		}}},
		{name: "minReady not met", minReady: 2, looks: []look{{
			nodes: []*corev1.Node{node("a", T), node("b", F), node("c", F)},
			want:  watchloop.Waiting("1 of 3 nodes Ready, at least 2 required; NotReady: b (Ready=False); c (Ready=False)"),
		}}},
		{name: "minReady above the nodes there are waits for more", minReady: 3, looks: []look{{
			nodes: []*corev1.Node{node("a", T), node("b", T)},
			want:  watchloop.Waiting("2 of 2 nodes Ready, at least 3 required"),
		}}},
		{name: "names at most five", looks: []look{{
			nodes: []*corev1.Node{node("a", F), node("b", F), node("c", F), node("d", F), node("e", F), node("f", F), node("g", T)},
			want:  watchloop.Waiting("1 of 7 nodes Ready; NotReady: a (Ready=False); b (Ready=False); c (Ready=False); d (Ready=False); e (Ready=False); and 1 more"),
		}}},
		{name: "nothing matches the selector", selector: "pool=gpu", looks: []look{{want: watchloop.Failed(`no nodes match "pool=gpu"`)}}},
		{name: "no nodes at all", looks: []look{{want: watchloop.Failed("no nodes in the cluster")}}},
		{name: "nodes gone later are waited for", selector: "pool=gpu", looks: []look{
			{nodes: []*corev1.Node{node("gpu-0", F)}, want: watchloop.Waiting(`0 of 1 node matching "pool=gpu" Ready; NotReady: gpu-0 (Ready=False)`)},
			{want: watchloop.Waiting(`no nodes match "pool=gpu" any more`)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := judge{selector: tt.selector, minReady: tt.minReady}
			for i, l := range tt.looks {
				if got := j.look(l.nodes, i == 0); got != l.want {
					t.Errorf("look %d:\n  got  %+v\n  want %+v", i, got, l.want)
				}
			}
		})
	}
}
