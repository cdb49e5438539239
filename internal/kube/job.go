package kube

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// podStatusGrace is how long a failed Job waits for its failed pod's status
// before it is reported from its condition alone.
const podStatusGrace = 3 * time.Second

// evaluateJob refines kstatus for Jobs. kstatus calls a started Job
// Current; a gate wants it finished, so a running Job is InProgress here.
// A Failed Job (or one with FailureTarget, which precedes Failed while its
// pods stop) names the pod and exit code that failed; a pod that cannot pull
// its image fails the Job at once. Crash loops are left to backoffLimit.
func evaluateJob(desc string, obj map[string]any, res *status.Result, pods []corev1.Pod) Health {
	var job batchv1.Job
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &job); err != nil {
		return Health{Status: status.UnknownStatus, Message: fmt.Sprintf("%s: decode: %v", desc, err)}
	}
	if res.Status == status.TerminatingStatus {
		return Health{Status: res.Status, Message: desc + ": " + res.Message}
	}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			msg := failedJobPod(pods)
			if msg == "" && time.Since(c.LastTransitionTime.Time) < podStatusGrace {
				// The Job and pod watches race: the Failed condition can
				// arrive before the pod status that names the exit code.
				return Health{Status: status.InProgressStatus, Message: desc + ": failed; waiting for the failed pod's status"}
			}
			if msg == "" {
				msg = c.Reason + ": " + c.Message
			}
			return Health{Status: status.FailedStatus, Message: desc + " failed: " + msg}
		case batchv1.JobComplete:
			return Health{Status: status.CurrentStatus, Message: desc + ": " + res.Message}
		}
	}
	if msg, _ := firstPodFailure(pods, false); msg != "" {
		return Health{Status: status.FailedStatus, Message: desc + ": " + msg}
	}
	if job.Status.StartTime == nil {
		return Health{Status: status.InProgressStatus, Message: desc + ": " + res.Message}
	}
	return Health{Status: status.InProgressStatus, Message: fmt.Sprintf("%s: running: %d active, %d succeeded, %d failed",
		desc, job.Status.Active, job.Status.Succeeded, job.Status.Failed)}
}

// failedJobPod describes the most recent failed container among pods, or
// "" when none is known (pods may already be gone).
func failedJobPod(pods []corev1.Pod) string {
	var best *corev1.Pod
	var bestMsg string
	for i := range pods {
		p := &pods[i]
		msg := podExit(p)
		if msg == "" {
			continue
		}
		if best == nil || p.CreationTimestamp.After(best.CreationTimestamp.Time) {
			best, bestMsg = p, msg
		}
	}
	return bestMsg
}

// podExit describes how a Job pod failed: a container's non-zero exit, or
// the pod's own reason (evicted, deadline exceeded).
func podExit(p *corev1.Pod) string {
	name := p.Namespace + "/" + p.Name
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if t != nil && t.ExitCode != 0 {
				return fmt.Sprintf("pod %s container %s exited with code %d (%s)", name, cs.Name, t.ExitCode, t.Reason)
			}
		}
	}
	if p.Status.Phase == corev1.PodFailed {
		return fmt.Sprintf("pod %s failed: %s: %s", name, p.Status.Reason, p.Status.Message)
	}
	return ""
}
