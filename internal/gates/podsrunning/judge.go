package podsrunning

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/watchloop"
)

// shownPods bounds how many pods a message names.
const shownPods = 3

// judge decides on the pods seen so far. From the first complete list it
// remembers each container's restart count, so that only restarts while
// the gate waits count.
type judge struct {
	namespace   string
	selector    string
	maxRestarts int32
	baseline    map[containerKey]int32
}

// containerKey names a container of one pod; init containers are prefixed
// with "init:", since they may share a name with a container.
type containerKey struct {
	pod       types.UID
	container string
}

func newJudge(namespace, selector string, maxRestarts int32) *judge {
	return &judge{namespace: namespace, selector: selector, maxRestarts: maxRestarts, baseline: map[containerKey]int32{}}
}

// look judges the pods; first is true for the first complete list.
func (j *judge) look(pods []*corev1.Pod, first bool) watchloop.Verdict {
	sort.Slice(pods, func(a, b int) bool { return pods[a].Name < pods[b].Name })
	if first {
		j.record(pods)
		if len(pods) == 0 {
			return watchloop.Failed("no pods match %q in %s", j.selector, j.namespace)
		}
	}
	var (
		failures, notReady          []string
		live, finished, terminating int
	)
	for _, p := range pods {
		switch {
		case p.DeletionTimestamp != nil:
			terminating++
			continue
		case p.Status.Phase == corev1.PodSucceeded:
			finished++
			continue
		case p.Status.Phase == corev1.PodFailed && metav1.GetControllerOf(p) != nil:
			finished++ // its controller runs a replacement
			continue
		case p.Status.Phase == corev1.PodFailed:
			failures = append(failures, fmt.Sprintf("%s Failed%s and has no controller to replace it", podName(p), why(p.Status.Reason, p.Status.Message)))
			continue
		}
		live++
		if msg := j.broken(p); msg != "" {
			failures = append(failures, msg)
			continue
		}
		if !runningAndReady(p) {
			notReady = append(notReady, podState(p))
		}
	}
	ignored := ignoredNote(finished, terminating)
	switch {
	case len(failures) > 0:
		return watchloop.Failed("%s", firstAndMore(failures))
	case live == 0:
		return watchloop.Waiting("no running pods match %q in %s yet%s", j.selector, j.namespace, ignored)
	case len(notReady) > 0:
		return watchloop.Waiting("%d of %s not Running and Ready: %s", len(notReady), plural(live, "pod"), list(notReady))
	}
	return watchloop.Passed("%s Running and Ready%s", plural(live, "pod"), ignored)
}

// record keeps the restart counts of the first list.
func (j *judge) record(pods []*corev1.Pod) {
	for _, p := range pods {
		eachContainer(p, func(key string, cs *corev1.ContainerStatus) {
			j.baseline[containerKey{p.UID, key}] = cs.RestartCount
		})
	}
}

// broken says why a pod cannot become Ready without a change: a container
// stuck in a back-off, or restarted more often than allowed.
func (j *judge) broken(p *corev1.Pod) string {
	var msg string
	eachContainer(p, func(key string, cs *corev1.ContainerStatus) {
		if msg != "" {
			return
		}
		what := fmt.Sprintf("%s %s %s", podName(p), containerWord(key), cs.Name)
		// A first failed pull is waited out: within seconds it heals (a
		// registry blip) or turns into ImagePullBackOff, and the gate
		// has the time.
		if w := cs.State.Waiting; w != nil && kube.StuckReason(w.Reason) && w.Reason != kube.ErrImagePull {
			msg = fmt.Sprintf("%s: %s (restarts: %d)%s", what, w.Reason, cs.RestartCount, lastExit(cs))
			if w.Reason != kube.CrashLoopBackOff && w.Message != "" {
				msg += ": " + w.Message
			}
			return
		}
		// A pod first seen after the first list has a baseline of zero:
		// it was created while the gate waited.
		if n := cs.RestartCount - j.baseline[containerKey{p.UID, key}]; n > j.maxRestarts {
			msg = fmt.Sprintf("%s restarted %s since the gate started (maxRestarts: %d)%s", what, plural(int(n), "time"), j.maxRestarts, lastExit(cs))
		}
	})
	return msg
}

// eachContainer calls f with the status of every init container and
// container, keyed as containerKey expects.
func eachContainer(p *corev1.Pod, f func(key string, cs *corev1.ContainerStatus)) {
	for i := range p.Status.InitContainerStatuses {
		cs := &p.Status.InitContainerStatuses[i]
		f("init:"+cs.Name, cs)
	}
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		f(cs.Name, cs)
	}
}

func containerWord(key string) string {
	if strings.HasPrefix(key, "init:") {
		return "init container"
	}
	return "container"
}

// lastExit adds a container's last exit, usually the best clue to a crash.
func lastExit(cs *corev1.ContainerStatus) string {
	t := cs.LastTerminationState.Terminated
	if t == nil {
		return ""
	}
	return fmt.Sprintf(", last exit code %d (%s)", t.ExitCode, t.Reason)
}

func runningAndReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	c := condition(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// podState says where a pod that is not Running and Ready stands:
// "pod demo/web-1 Pending (Unschedulable: 0/3 nodes are available…)".
func podState(p *corev1.Pod) string {
	phase := p.Status.Phase
	if phase == "" {
		phase = corev1.PodPending
	}
	s := fmt.Sprintf("%s %s", podName(p), phase)
	if phase == corev1.PodRunning {
		s += ", not Ready"
	}
	var waitingFor string
	eachContainer(p, func(key string, cs *corev1.ContainerStatus) {
		if w := cs.State.Waiting; waitingFor == "" && w != nil && w.Reason != "" {
			waitingFor = fmt.Sprintf("%s %s waiting: %s", containerWord(key), cs.Name, w.Reason)
		}
	})
	switch sched, ready := condition(p, corev1.PodScheduled), condition(p, corev1.PodReady); {
	case sched != nil && sched.Status == corev1.ConditionFalse:
		s += why(sched.Reason, sched.Message)
	case waitingFor != "":
		s += " (" + waitingFor + ")"
	case ready != nil && ready.Status != corev1.ConditionTrue:
		s += why(ready.Reason, ready.Message)
	}
	return s
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// why formats a reason and a message as " (Reason: message)", or nothing.
func why(reason, message string) string {
	switch {
	case reason != "" && message != "":
		return fmt.Sprintf(" (%s: %s)", reason, message)
	case reason != "" || message != "":
		return " (" + reason + message + ")"
	}
	return ""
}

func podName(p *corev1.Pod) string { return fmt.Sprintf("pod %s/%s", p.Namespace, p.Name) }

// plural says "1 pod" or "3 pods".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// list names up to shownPods entries and counts the rest.
func list(items []string) string {
	if len(items) <= shownPods {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:shownPods], "; "), len(items)-shownPods)
}

// firstAndMore reports the first failing pod and how many more fail.
func firstAndMore(failures []string) string {
	switch n := len(failures) - 1; n {
	case 0:
		return failures[0]
	case 1:
		return failures[0] + " (and 1 more failing pod)"
	default:
		return fmt.Sprintf("%s (and %d more failing pods)", failures[0], n)
	}
}

// ignoredNote says which pods were left out: " (ignored: 2 finished)".
func ignoredNote(finished, terminating int) string {
	var parts []string
	if finished > 0 {
		parts = append(parts, fmt.Sprintf("%d finished", finished))
	}
	if terminating > 0 {
		parts = append(parts, fmt.Sprintf("%d terminating", terminating))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (ignored: " + strings.Join(parts, ", ") + ")"
}
