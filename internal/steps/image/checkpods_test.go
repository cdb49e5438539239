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

	"github.com/upshift-dev/upshift/internal/step"
)

// The pods the rollout's verdict read settle the check when they show
// every wanted pod running the images; otherwise the API server is asked,
// and its answer is the verdict.
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
	for _, tt := range []struct {
		name     string
		judged   []corev1.Pod
		live     []corev1.Pod // what the API server lists
		lists    int
		mismatch bool
	}{
		{"judged pods run the image", []corev1.Pod{pod("a", "web:v2"), pod("b", "web:v2")}, nil, 0, false},
		{"fewer judged pods than replicas", []corev1.Pod{pod("a", "web:v2")}, []corev1.Pod{pod("a", "web:v2"), pod("b", "web:v2")}, 1, false},
		{"a judged pod runs another image", []corev1.Pod{pod("a", "web:v2"), pod("b", "web:v1")}, []corev1.Pod{pod("a", "web:v2"), pod("c", "web:v2")}, 1, false},
		{"none judged, the list shows a mismatch", nil, []corev1.Pod{pod("a", "web:v2"), pod("b", "web:v1")}, 1, true},
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
			e := &Executor{ref: step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web"}, images: map[string]string{"web": "web:v2"}, pods: cs}
			n, mismatch, err := e.checkPods(context.Background(), w, tt.judged)
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
