package local

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// why says, for a pod whose eviction a budget kept refusing, what the
// budget counts and which of its pods are not healthy and where: the
// operator's next question ("which replica never came up, and why?").
// Best effort: what cannot be read is left out.
func why(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	pdbs, err := cs.PolicyV1().PodDisruptionBudgets(pod.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, pdb := range pdbs.Items {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		st := pdb.Status
		fmt.Fprintf(&b, " (budget %s: %d of %d pods healthy, %d needed, %d disruptions allowed",
			pdb.Name, st.CurrentHealthy, st.ExpectedPods, st.DesiredHealthy, st.DisruptionsAllowed)
		pods, err := cs.CoreV1().Pods(pod.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err == nil {
			for i := range pods.Items {
				if s := unhealthy(&pods.Items[i]); s != "" {
					b.WriteString("; " + s)
				}
			}
		}
		b.WriteString(")")
	}
	return b.String()
}

// unhealthy describes a pod a budget does not count as healthy, or is
// empty for a Ready one.
func unhealthy(pod *corev1.Pod) string {
	if pod.DeletionTimestamp != nil {
		return fmt.Sprintf("pod %s on %q is being deleted", pod.Name, pod.Spec.NodeName)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return ""
		}
	}
	s := fmt.Sprintf("pod %s on %q is %s, not Ready", pod.Name, pod.Spec.NodeName, pod.Status.Phase)
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			s += fmt.Sprintf(" (%s: %s)", c.Type, c.Message)
		}
	}
	return s
}
