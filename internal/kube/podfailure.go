package kube

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// podFailureOf says why a pod is failing, or "" when it is not. With crashes
// set, a crash loop or a restart of a container that is not Ready counts
// too: one crash of a new pod is enough, since an upgrade gate prefers a
// fast, explained failure to waiting out progressDeadlineSeconds. Job pods
// pass crashes=false: their backoffLimit decides how many crashes are fine.
//
// It also names the container whose log tells why: the one that crashed
// (its previous instance's log), nil when the container never ran (an
// image that cannot be pulled, a missing ConfigMap).
func podFailureOf(pod *corev1.Pod, crashes bool) (string, *ContainerRef) {
	if pod.DeletionTimestamp != nil {
		return "", nil // on its way out; its replacement is judged instead
	}
	check := func(what string, cs *corev1.ContainerStatus) (string, *ContainerRef) {
		prefix := fmt.Sprintf("pod %s/%s %s %s: ", pod.Namespace, pod.Name, what, cs.Name)
		crashed := &ContainerRef{Namespace: pod.Namespace, Pod: pod.Name, Container: cs.Name, Previous: true}
		if w := cs.State.Waiting; w != nil && StuckReason(w.Reason) {
			switch {
			case w.Reason == CrashLoopBackOff && crashes:
				return prefix + fmt.Sprintf("%s (restarts: %d)", w.Reason, cs.RestartCount) + lastExit(cs), crashed
			case w.Reason == CrashLoopBackOff: // the Job's backoffLimit decides
			case w.Message != "":
				return prefix + w.Reason + ": " + w.Message, nil
			default:
				return prefix + w.Reason, nil
			}
		}
		last := cs.LastTerminationState.Terminated
		if crashes && last != nil && cs.RestartCount > 0 && !cs.Ready && cs.State.Terminated == nil {
			return prefix + fmt.Sprintf("restarted after exit code %d (%s) (restarts: %d)", last.ExitCode, last.Reason, cs.RestartCount), crashed
		}
		return "", nil
	}
	for i := range pod.Status.InitContainerStatuses {
		if msg, c := check("init container", &pod.Status.InitContainerStatuses[i]); msg != "" {
			return msg, c
		}
	}
	for i := range pod.Status.ContainerStatuses {
		if msg, c := check("container", &pod.Status.ContainerStatuses[i]); msg != "" {
			return msg, c
		}
	}
	return "", nil
}

// lastExit adds the last exit of a crash-looping container, which is usually
// the most useful clue.
func lastExit(cs *corev1.ContainerStatus) string {
	t := cs.LastTerminationState.Terminated
	if t == nil {
		return ""
	}
	return fmt.Sprintf(", last exit code %d (%s)", t.ExitCode, t.Reason)
}

// firstPodFailure reports the first failing pod of pods (sorted by the
// caller) and how many more fail, and the container whose log tells why.
func firstPodFailure(pods []corev1.Pod, crashes bool) (string, *ContainerRef) {
	first, more := "", 0
	var logs *ContainerRef
	for i := range pods {
		msg, c := podFailureOf(&pods[i], crashes)
		switch {
		case msg == "":
		case first == "":
			first, logs = msg, c
		default:
			more++
		}
	}
	switch {
	case more == 1:
		first += " (and 1 more failing pod)"
	case more > 1:
		first += fmt.Sprintf(" (and %d more failing pods)", more)
	}
	return first, logs
}
