package kube

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Hand-built objects as the controllers would leave them.

func toUnstructured(t *testing.T, apiVersion, kind string, obj any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("to unstructured: %v", err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

func controller(kind, name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{Kind: kind, Name: name, UID: uid, Controller: &yes}}
}

func ptr[T any](v T) *T { return &v }

// deployment is demo/web at generation gen, observed at observed, revision
// annotation rev, with 3 wanted replicas of which the status says how many
// are updated and available.
func deployment(gen, observed int64, rev string, updated, available int32) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "demo", Name: "web", UID: "dep-uid", Generation: gen,
			Annotations: map[string]string{deploymentRevision: rev},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas:                ptr(int32(3)),
			ProgressDeadlineSeconds: ptr(int32(600)),
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: observed,
			Replicas:           3,
			UpdatedReplicas:    updated,
			ReadyReplicas:      available,
			AvailableReplicas:  available,
		},
	}
	progressing := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"}
	if updated == 3 && available == 3 {
		progressing.Reason = "NewReplicaSetAvailable"
	}
	d.Status.Conditions = []appsv1.DeploymentCondition{
		progressing,
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
	}
	return d
}

func replicaSet(name, rev string) appsv1.ReplicaSet {
	return appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Namespace: "demo", Name: name, UID: types.UID(name + "-uid"),
		Annotations:     map[string]string{deploymentRevision: rev},
		OwnerReferences: controller("Deployment", "web", "dep-uid"),
	}}
}

// pod is a running pod whose one container, web, is ready.
func pod(name string, owner []metav1.OwnerReference, labels map[string]string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, Labels: labels, OwnerReferences: owner},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "web", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
}

func crashLooping(p corev1.Pod, restarts int32) corev1.Pod {
	p = *p.DeepCopy() // statuses are shared slices
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready = false
	cs.RestartCount = restarts
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container",
	}}
	cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
	return p
}

func waiting(p corev1.Pod, reason, message string) corev1.Pod {
	p = *p.DeepCopy()
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready = false
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
	return p
}

func daemonSet(templateGen string, updated, ready int32) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "demo", Name: "agent", UID: "ds-uid", Generation: 2,
			Annotations: map[string]string{appsv1.DeprecatedTemplateGeneration: templateGen},
		},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}},
		Status: appsv1.DaemonSetStatus{
			ObservedGeneration:     2,
			DesiredNumberScheduled: 2,
			CurrentNumberScheduled: 2,
			UpdatedNumberScheduled: updated,
			NumberReady:            ready,
			NumberAvailable:        ready,
		},
	}
}

func statefulSet(updateRevision string, updated, ready int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "db", UID: "sts-uid", Generation: 3},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: 3,
			Replicas:           2,
			ReadyReplicas:      ready,
			CurrentReplicas:    2 - updated,
			UpdatedReplicas:    updated,
			CurrentRevision:    "db-old",
			UpdateRevision:     updateRevision,
		},
	}
}

func job(conds ...batchv1.JobCondition) *batchv1.Job {
	start := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "migrate", UID: "job-uid", Generation: 1},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr(int32(0)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "job-uid"}},
		},
		Status: batchv1.JobStatus{StartTime: &start, Active: 1, Conditions: conds},
	}
}

func jobPodExited(name string, code int32, reason string, created time.Time) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "demo", Name: name, CreationTimestamp: metav1.NewTime(created),
			OwnerReferences: controller("Job", "migrate", "job-uid"),
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodFailed,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name:  "migrate",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}},
			}},
		},
	}
}

// setCRD is a CRD of kind in group, labelled upshift.test/set=<group>
// so a selector finds the set, whose one field's description is given
// (changing it changes the schema and nothing else).
func setCRD(group, kind, description string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]ss.%[1]s, labels: {upshift.test/set: %[1]s}}
spec:
  group: %[1]s
  names: {kind: %[3]s, plural: %[2]ss, listKind: %[3]sList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer, description: %[4]s}}}
`, group, strings.ToLower(kind), kind, description)
}
