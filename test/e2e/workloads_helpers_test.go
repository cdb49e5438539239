package e2e

import (
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func podTemplate(labels map[string]string, image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: image}},
		},
	}
}

func deployment(name string, replicas int32, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, image),
		},
	}
}

// livePods lists the pods matching selector that are not being deleted.
func (e *env) livePods(t *testing.T, selector string) []corev1.Pod {
	t.Helper()
	list, err := e.cs.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list pods %q: %v", selector, err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// checkPodsRunImage asserts that there are want live pods, each Running and
// Ready, whose containers report image in their status (what the fake
// kubelet "runs"), not only in their spec.
func checkPodsRunImage(t *testing.T, pods []corev1.Pod, want int, image string) {
	t.Helper()
	if len(pods) != want {
		t.Fatalf("got %d live pods %s, want %d", len(pods), podNames(pods), want)
	}
	for _, p := range pods {
		if p.Spec.Containers[0].Image != image {
			t.Errorf("pod %s: spec image %q, want %q", p.Name, p.Spec.Containers[0].Image, image)
		}
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: phase %s, want Running", p.Name, p.Status.Phase)
		}
		if len(p.Status.ContainerStatuses) != 1 {
			t.Errorf("pod %s: %d container statuses, want 1", p.Name, len(p.Status.ContainerStatuses))
			continue
		}
		cs := p.Status.ContainerStatuses[0]
		if cs.Image != image {
			t.Errorf("pod %s: status image %q, want %q", p.Name, cs.Image, image)
		}
		if !cs.Ready {
			t.Errorf("pod %s: container %s not ready", p.Name, cs.Name)
		}
	}
}
