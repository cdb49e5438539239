package image

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/internal/kube"
)

// checkPods lists the workload's pods (by its selector) and checks that
// every running one, not terminating, reports the wanted image for each
// container of the step. It returns how many pods it checked and, if one
// does not, what is wrong.
func (e *Executor) checkPods(ctx context.Context, w *unstructured.Unstructured) (checked int, mismatch string, err error) {
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
	names := make([]string, 0, len(e.images))
	for c := range e.images {
		names = append(names, c)
	}
	sort.Strings(names)
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	var problems []string
	for i := range pods.Items {
		p := &pods.Items[i]
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
		return checked, "", nil
	case 1:
		return checked, problems[0], nil
	}
	return checked, fmt.Sprintf("%s (and %d more)", problems[0], len(problems)-1), nil
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
