package image

import (
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/internal/kube"
)

// checkPods finds the workload's pods (by its selector) and checks that
// every running one, not terminating, reports the wanted image for each
// container of the step (judgePods). It returns how many pods it checked
// and, if one does not, what is wrong.
//
// rolled is the rollout's verdict: when the pods it read show every pod
// the workload it read wants running the images, a list would only say
// so again. Anything else is asked of the API server, which may know
// better. The count comes from the object the verdict read, not from w,
// a write's answer, whose status can predate its controller's count.
func (e *Executor) checkPods(ctx context.Context, w *unstructured.Unstructured, rolled kube.Health) (checked int, mismatch string, err error) {
	if rolled.Object != nil {
		if n, mismatch := e.judgePods(rolled.Pods); mismatch == "" && n > 0 {
			if want, known := wantedPods(rolled.Object); known && int64(n) >= want {
				return n, "", nil
			}
		}
	}
	raw, _, err := unstructured.NestedMap(w.Object, "spec", "selector")
	if err != nil {
		return 0, "", fmt.Errorf("spec.selector: %w", err)
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return 0, "", fmt.Errorf("spec.selector: %w", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return 0, "", fmt.Errorf("spec.selector: %w", err)
	}
	var pods *corev1.PodList
	transient := func(err error) bool { return ctx.Err() == nil && kube.Transient(err) }
	err = retry.OnError(retry.DefaultBackoff, transient, func() error {
		pods, err = e.pods.CoreV1().Pods(e.ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		return err
	})
	if err != nil {
		return 0, "", fmt.Errorf("list pods: %w", err)
	}
	checked, mismatch = e.judgePods(pods.Items)
	return checked, mismatch, nil
}

// wantedPods is how many pods the workload wants running: its replicas
// (one when unset), or for a DaemonSet the nodes it should run on, as its
// status says. known is false when the object does not say.
func wantedPods(w *unstructured.Unstructured) (n int64, known bool) {
	if w.GetKind() == "DaemonSet" {
		n, found, err := unstructured.NestedInt64(w.Object, "status", "desiredNumberScheduled")
		return n, found && err == nil && n > 0
	}
	n, found, err := unstructured.NestedInt64(w.Object, "spec", "replicas")
	if err != nil {
		return 0, false
	}
	if !found {
		return 1, true
	}
	return n, true
}

// judgePods checks that every running pod, not terminating, reports the
// wanted image for each container of the step: how many it checked and,
// if one does not, what is wrong.
func (e *Executor) judgePods(items []corev1.Pod) (checked int, mismatch string) {
	pods := slices.Clone(items)
	names := make([]string, 0, len(e.images))
	for c := range e.images {
		names = append(names, c)
	}
	sort.Strings(names)
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var problems []string
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		checked++
		for _, c := range names {
			if msg := podMismatch(p, c, e.images[c]); msg != "" {
				problems = append(problems, msg)
			}
		}
	}
	switch len(problems) {
	case 0:
		return checked, ""
	case 1:
		return checked, problems[0]
	}
	return checked, fmt.Sprintf("%s (and %d more)", problems[0], len(problems)-1)
}

// podMismatch says how a pod's container differs from the wanted image, or
// "" when it runs it.
func podMismatch(p *corev1.Pod, container, want string) string {
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for _, cs := range statuses {
			if cs.Name != container {
				continue
			}
			if runsImage(cs, want) {
				return ""
			}
			return fmt.Sprintf("pod %s/%s container %s runs %s, want %s", p.Namespace, p.Name, container, cs.Image, want)
		}
	}
	return fmt.Sprintf("pod %s/%s container %s reports no status, want %s", p.Namespace, p.Name, container, want)
}
