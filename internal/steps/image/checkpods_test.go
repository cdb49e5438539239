package image

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// The pods the rollout's verdict read settle the check when they show
// every pod the object it read wants running the images; otherwise the
// API server is asked, and its answer is the verdict.
func TestCheckPodsStartsFromThePodsTheRolloutJudged(t *testing.T) {
	t.Parallel()
	pod := func(name, image string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", Labels: map[string]string{"app": "web"}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
				{Name: "web", Image: image},
			}},
		}
	}
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "demo"},
		"spec":     map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}},
	}}
	// A DaemonSet's count is in its status, which a write's answer may
	// not have yet: the count is the judged object's.
	daemonSet := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "DaemonSet",
			"metadata": map[string]any{"name": "web", "namespace": "demo"},
			"spec":     map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}},
			"status":   status,
		}}
	}
	both := []corev1.Pod{pod("a", "web:v2"), pod("b", "web:v2")}
	for _, tt := range []struct {
		name     string
		written  *unstructured.Unstructured // the write's answer
		rolled   kube.Health
		live     []corev1.Pod // what the API server lists
		lists    int
		mismatch bool
	}{
		{"judged pods run the image", w, kube.Health{Object: w, Pods: both}, nil, 0, false},
		{"fewer judged pods than replicas", w, kube.Health{Object: w, Pods: both[:1]}, both, 1, false},
		{"a judged pod runs another image", w, kube.Health{Object: w, Pods: []corev1.Pod{pod("a", "web:v2"), pod("b", "web:v1")}}, []corev1.Pod{pod("a", "web:v2"), pod("c", "web:v2")}, 1, false},
		{"none judged, the list shows a mismatch", w, kube.Health{}, []corev1.Pod{pod("a", "web:v2"), pod("b", "web:v1")}, 1, true},
		{"pods without the object they were judged with", w, kube.Health{Pods: both}, both, 1, false},
		{"a DaemonSet's judged pods, all it wants", daemonSet(nil), kube.Health{Object: daemonSet(map[string]any{"desiredNumberScheduled": int64(2)}), Pods: both}, nil, 0, false},
		{"a DaemonSet wanting more than were judged", daemonSet(map[string]any{"desiredNumberScheduled": int64(2)}), kube.Health{Object: daemonSet(map[string]any{"desiredNumberScheduled": int64(3)}), Pods: both}, both, 1, false},
		{"a DaemonSet whose judged status has no count", daemonSet(nil), kube.Health{Object: daemonSet(nil), Pods: both}, both, 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var objs []runtime.Object
			for i := range tt.live {
				objs = append(objs, &tt.live[i])
			}
			cs := fake.NewClientset(objs...)
			lists := 0
			cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				lists++
				return false, nil, nil
			})
			e := &Executor{ref: step.Ref{APIVersion: "apps/v1", Kind: tt.written.GetKind(), Namespace: "demo", Name: "web"}, images: map[string]string{"web": "web:v2"}, pods: cs}
			n, mismatch, err := e.checkPods(context.Background(), tt.written, tt.rolled)
			if err != nil {
				t.Fatal(err)
			}
			if lists != tt.lists {
				t.Errorf("listed pods %d times, want %d", lists, tt.lists)
			}
			if (mismatch != "") != tt.mismatch {
				t.Errorf("mismatch %q, want one: %v", mismatch, tt.mismatch)
			}
			if !tt.mismatch && n != 2 {
				t.Errorf("checked %d pods, want 2", n)
			}
		})
	}
}
