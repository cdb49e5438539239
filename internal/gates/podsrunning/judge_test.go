package podsrunning

import (
	"github.com/upshift-dev/upshift/internal/watchloop"

	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// pod builds a pod in namespace demo; opts change it.
func pod(name string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, UID: types.UID("uid-" + name)},
		Status: corev1.PodStatus{
			Phase:             corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func restarts(n int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = n }
}

func waitingIn(reason, message string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		cs := &p.Status.ContainerStatuses[0]
		cs.Ready = false
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		p.Status.Conditions[0] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]"}
	}
}

func crashed(p *corev1.Pod) {
	p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
}

func unschedulable(p *corev1.Pod) {
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}}
}

func phase(ph corev1.PodPhase, reason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase, p.Status.Reason = ph, reason }
}

func ownedByReplicaSet(p *corev1.Pod) {
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs", Controller: &yes}}
}

func terminating(p *corev1.Pod) {
	now := metav1.Now()
	p.DeletionTimestamp = &now
}

func initContainer(reason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "migrate", RestartCount: 4, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
	}
}

func TestJudge(t *testing.T) {
	type look struct {
		pods []*corev1.Pod
		want watchloop.Verdict
	}
	tests := []struct {
		name        string
		maxRestarts int32
		looks       []look // the first is the first complete list
	}{
		{name: "all Running and Ready", looks: []look{{
			pods: []*corev1.Pod{pod("web-a"), pod("web-b")},
			want: watchloop.Passed("2 pods Running and Ready"),
		}}},
		{name: "one pod", looks: []look{{pods: []*corev1.Pod{pod("web-a")}, want: watchloop.Passed("1 pod Running and Ready")}}},
		{name: "nothing matches on the first list", looks: []look{{want: watchloop.Failed(`no pods match "app=web" in demo`)}}},
		{name: "pods gone later are waited for", looks: []look{
			{pods: []*corev1.Pod{pod("web-a", unschedulable)}, want: watchloop.Waiting(`1 of 1 pod not Running and Ready: pod demo/web-a Pending (Unschedulable: 0/3 nodes are available)`)},
			{want: watchloop.Waiting(`no running pods match "app=web" in demo yet`)},
		}},
		{name: "waits for a pod to become Ready", looks: []look{
			{pods: []*corev1.Pod{pod("web-a"), pod("web-b", waitingIn("ContainerCreating", ""))},
				want: watchloop.Waiting("1 of 2 pods not Running and Ready: pod demo/web-b Running, not Ready (container app waiting: ContainerCreating)")},
			{pods: []*corev1.Pod{pod("web-a"), pod("web-b")}, want: watchloop.Passed("2 pods Running and Ready")},
		}},
		{name: "not Ready without a waiting container shows the condition", looks: []look{{
			pods: []*corev1.Pod{pod("web-a", func(p *corev1.Pod) {
				p.Status.Conditions[0] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady", Message: `corresponding condition of pod readiness gate "lb" does not exist`}
			})},
			want: watchloop.Waiting(`1 of 1 pod not Running and Ready: pod demo/web-a Running, not Ready (ReadinessGatesNotReady: corresponding condition of pod readiness gate "lb" does not exist)`),
		}}},
		{name: "names at most three pods", looks: []look{{
			pods: []*corev1.Pod{pod("a", unschedulable), pod("b", unschedulable), pod("c", unschedulable), pod("d", unschedulable), pod("e", unschedulable)},
			want: watchloop.Waiting("5 of 5 pods not Running and Ready: pod demo/a Pending (Unschedulable: 0/3 nodes are available); pod demo/b Pending (Unschedulable: 0/3 nodes are available); pod demo/c Pending (Unschedulable: 0/3 nodes are available); and 2 more"),
		}}},
		{name: "CrashLoopBackOff fails at once", maxRestarts: 100, looks: []look{{
			pods: []*corev1.Pod{pod("web-a"), pod("web-b", waitingIn("CrashLoopBackOff", "back-off 10s restarting failed container"), restarts(3), crashed)},
			want: watchloop.Failed("pod demo/web-b container app: CrashLoopBackOff (restarts: 3), last exit code 1 (Error)"),
		}}},
		{name: "ImagePullBackOff fails at once with the kubelet's message", looks: []look{{
			pods: []*corev1.Pod{pod("web-a", waitingIn("ImagePullBackOff", `Back-off pulling image "registry.example/web:v9"`))},
			want: watchloop.Failed(`pod demo/web-a container app: ImagePullBackOff (restarts: 0): Back-off pulling image "registry.example/web:v9"`),
		}}},
		{name: "a crash-looping init container fails", looks: []look{{
			pods: []*corev1.Pod{pod("web-a", initContainer("CrashLoopBackOff"))},
			want: watchloop.Failed("pod demo/web-a init container migrate: CrashLoopBackOff (restarts: 4)"),
		}}},
		{name: "several failing pods are counted", looks: []look{{
			pods: []*corev1.Pod{pod("a", waitingIn("InvalidImageName", "")), pod("b", waitingIn("CrashLoopBackOff", "")), pod("c", waitingIn("ErrImageNeverPull", ""))},
			want: watchloop.Failed("pod demo/a container app: InvalidImageName (restarts: 0) (and 2 more failing pods)"),
		}}},
		{name: "CreateContainerConfigError fails at once with the kubelet's message", looks: []look{{
			pods: []*corev1.Pod{pod("web-a", waitingIn("CreateContainerConfigError", `secret "db" not found`))},
			want: watchloop.Failed(`pod demo/web-a container app: CreateContainerConfigError (restarts: 0): secret "db" not found`),
		}}},
		{name: "ErrImagePull is waited for: it turns into ImagePullBackOff or heals", looks: []look{{
			pods: []*corev1.Pod{pod("a", waitingIn("ErrImagePull", "rpc error"))},
			want: watchloop.Waiting("1 of 1 pod not Running and Ready: pod demo/a Running, not Ready (container app waiting: ErrImagePull)"),
		}}},
		{name: "restarts before the gate do not count", looks: []look{
			{pods: []*corev1.Pod{pod("web-a", restarts(7)), pod("web-b", unschedulable)}, want: watchloop.Waiting("1 of 2 pods not Running and Ready: pod demo/web-b Pending (Unschedulable: 0/3 nodes are available)")},
			{pods: []*corev1.Pod{pod("web-a", restarts(7)), pod("web-b")}, want: watchloop.Passed("2 pods Running and Ready")},
		}},
		{name: "one restart while waiting fails with the default of 0", looks: []look{
			{pods: []*corev1.Pod{pod("web-a", restarts(7)), pod("web-b", unschedulable)}, want: watchloop.Waiting("1 of 2 pods not Running and Ready: pod demo/web-b Pending (Unschedulable: 0/3 nodes are available)")},
			{pods: []*corev1.Pod{pod("web-a", restarts(8), crashed), pod("web-b", unschedulable)}, want: watchloop.Failed("pod demo/web-a container app restarted 1 time since the gate started (maxRestarts: 0), last exit code 1 (Error)")},
		}},
		{name: "restarts up to maxRestarts are allowed", maxRestarts: 2, looks: []look{
			{pods: []*corev1.Pod{pod("web-a", restarts(1)), pod("web-b", unschedulable)}, want: watchloop.Waiting("1 of 2 pods not Running and Ready: pod demo/web-b Pending (Unschedulable: 0/3 nodes are available)")},
			{pods: []*corev1.Pod{pod("web-a", restarts(3)), pod("web-b")}, want: watchloop.Passed("2 pods Running and Ready")},
			{pods: []*corev1.Pod{pod("web-a", restarts(4)), pod("web-b")}, want: watchloop.Failed("pod demo/web-a container app restarted 3 times since the gate started (maxRestarts: 2)")},
		}},
		{name: "a pod that appears later counts all its restarts", looks: []look{
			{pods: []*corev1.Pod{pod("web-a", unschedulable)}, want: watchloop.Waiting("1 of 1 pod not Running and Ready: pod demo/web-a Pending (Unschedulable: 0/3 nodes are available)")},
			{pods: []*corev1.Pod{pod("web-a", unschedulable), pod("web-b", restarts(1))}, want: watchloop.Failed("pod demo/web-b container app restarted 1 time since the gate started (maxRestarts: 0)")},
		}},
		{name: "finished and terminating pods are left out", looks: []look{{
			pods: []*corev1.Pod{pod("job-x", phase(corev1.PodSucceeded, "")), pod("web-old", ownedByReplicaSet, phase(corev1.PodFailed, "Evicted")), pod("web-going", terminating, waitingIn("CrashLoopBackOff", "")), pod("web-a")},
			want: watchloop.Passed("1 pod Running and Ready (ignored: 2 finished, 1 terminating)"),
		}}},
		{name: "only finished pods: waits for their replacements", looks: []look{{
			pods: []*corev1.Pod{pod("web-old", ownedByReplicaSet, phase(corev1.PodFailed, "Evicted"))},
			want: watchloop.Waiting(`no running pods match "app=web" in demo yet (ignored: 1 finished)`),
		}}},
		{name: "a Failed pod without a controller fails", looks: []look{{
			pods: []*corev1.Pod{pod("web-a", phase(corev1.PodFailed, "Evicted"), func(p *corev1.Pod) { p.Status.Message = "The node was low on resource: memory." })},
			want: watchloop.Failed("pod demo/web-a Failed (Evicted: The node was low on resource: memory.) and has no controller to replace it"),
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge("demo", "app=web", tt.maxRestarts)
			for i, l := range tt.looks {
				got := j.look(l.pods, i == 0)
				if got != l.want {
					t.Errorf("look %d:\n  got  %+v\n  want %+v", i, got, l.want)
				}
			}
		})
	}
}
