package kube

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A write's answer that is Current ends the wait at once, without asking
// the API server anything (this Waiter has no client to ask with): a
// ConfigMap, say. A workload's or a Job's answer never does, even one
// kstatus calls Current: their verdict reads their pods too, and a no-op
// write of a Deployment whose pods crash-loop must still fail the wait.
func TestCurrentAnswerEndsTheWaitWithoutReads(t *testing.T) {
	w := NewWaiter(nil, nil)
	cm := toUnstructured(t, "v1", "ConfigMap", &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", ResourceVersion: "7"},
		Data:       map[string]string{"k": "v"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h, err := w.WaitWritten(ctx, cm, time.Second)
	if err != nil || !h.Current() {
		t.Fatalf("WaitWritten(ConfigMap answer) = %v, %v; want Current at once", h, err)
	}

	rolledOut := toUnstructured(t, "apps/v1", "Deployment", deployment(2, 2, "1", 3, 3))
	if h := Evaluate(rolledOut, Related{}); !h.Current() {
		t.Fatalf("the fixture should be Current to kstatus: %v", h)
	}
	for _, u := range []*unstructured.Unstructured{
		rolledOut,
		toUnstructured(t, "apps/v1", "DaemonSet", daemonSet("1", 1, 1)),
		toUnstructured(t, "apps/v1", "StatefulSet", statefulSet("r1", 1, 1)),
		toUnstructured(t, "batch/v1", "Job", job(batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})),
		toUnstructured(t, "apps/v1", "ReplicaSet", &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "shop"}}),
	} {
		if h, ok := currentAsWritten(u); ok {
			t.Errorf("%s: judged %v from the answer alone; its verdict needs its pods", groupKind(u), h)
		}
	}
}
