package job

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// podsOf lists the pods the Job controls, oldest first. A pod left by an
// earlier Job of the same name has another owner UID and is left out.
func (e *Executor) podsOf(ctx context.Context) ([]corev1.Pod, error) {
	j, err := e.applier.Get(ctx, e.ref)
	if err != nil {
		return nil, err
	}
	raw, _, err := unstructured.NestedMap(j.Object, "spec", "selector")
	if err != nil {
		return nil, fmt.Errorf("%s spec.selector: %w", e.ref, err)
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil, fmt.Errorf("%s spec.selector: %w", e.ref, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("%s spec.selector: %w", e.ref, err)
	}
	list, err := e.cs.CoreV1().Pods(e.ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("list pods of %s: %w", e.ref, err)
	}
	var pods []corev1.Pod
	for _, p := range list.Items {
		if c := metav1.GetControllerOf(&p); c != nil && c.UID == j.GetUID() {
			pods = append(pods, p)
		}
	}
	sort.SliceStable(pods, func(i, k int) bool {
		return pods[i].CreationTimestamp.Before(&pods[k].CreationTimestamp)
	})
	return pods, nil
}

// exit is how one container of a Job pod failed.
type exit struct {
	pod       *corev1.Pod
	container string
	code      int32
	reason    string
	// previous: the failure was an earlier run of a container that
	// restarted (restartPolicy OnFailure), whose log is the previous one.
	previous bool
}

func (x exit) String() string {
	if x.container == "" {
		return fmt.Sprintf("pod %s/%s failed: %s", x.pod.Namespace, x.pod.Name, x.reason)
	}
	return fmt.Sprintf("pod %s/%s container %s exited with code %d (%s)", x.pod.Namespace, x.pod.Name, x.container, x.code, x.reason)
}

// lastFailure finds the most recent failure among pods (oldest first): a
// container's non-zero exit, or else a pod that failed as a whole
// (evicted, past its deadline), whose log is its first container's.
func lastFailure(pods []corev1.Pod) (exit, bool) {
	for i := len(pods) - 1; i >= 0; i-- {
		p := &pods[i]
		statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		for _, cs := range statuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				return exit{pod: p, container: cs.Name, code: t.ExitCode, reason: t.Reason}, true
			}
			if t := cs.LastTerminationState.Terminated; t != nil && t.ExitCode != 0 {
				return exit{pod: p, container: cs.Name, code: t.ExitCode, reason: t.Reason, previous: true}, true
			}
		}
		if p.Status.Phase == corev1.PodFailed {
			return exit{pod: p, reason: p.Status.Reason + ": " + p.Status.Message}, true
		}
	}
	return exit{}, false
}

// notRunning says why the first pod that is not running yet waits: not
// scheduled, or a container waiting (pulling, creating). "" when none waits.
func notRunning(pods []corev1.Pod) string {
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return fmt.Sprintf("pod %s/%s is not scheduled: %s: %s", p.Namespace, p.Name, c.Reason, c.Message)
			}
		}
		statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		for _, cs := range statuses {
			if w := cs.State.Waiting; w != nil && w.Reason != "" {
				return fmt.Sprintf("pod %s/%s container %s is waiting: %s", p.Namespace, p.Name, cs.Name, w.Reason)
			}
		}
		return fmt.Sprintf("pod %s/%s is pending", p.Namespace, p.Name)
	}
	return ""
}
