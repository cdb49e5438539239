package kube

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

func TestEvaluate(t *testing.T) {
	oldRS, newRS := replicaSet("web-old", "1"), replicaSet("web-new", "2")
	rss := []appsv1.ReplicaSet{oldRS, newRS}
	webLabels := map[string]string{"app": "web"}
	oldPod := pod("web-old-aaaaa", controller("ReplicaSet", "web-old", oldRS.UID), webLabels)
	newPod := pod("web-new-abcde", controller("ReplicaSet", "web-new", newRS.UID), webLabels)
	otherPod := pod("api-zzzzz", controller("ReplicaSet", "api-x", "other-rs-uid"), webLabels)

	dsPod := func(name, gen string) corev1.Pod {
		return pod(name, controller("DaemonSet", "agent", "ds-uid"), map[string]string{"app": "agent", templateGeneration: gen})
	}
	stsPod := func(name, rev string) corev1.Pod {
		return pod(name, controller("StatefulSet", "db", "sts-uid"), map[string]string{"app": "db", appsv1.StatefulSetRevisionLabel: rev})
	}
	initCrash := newPod
	initCrash.Status.InitContainerStatuses = []corev1.ContainerStatus{{
		Name: "setup", RestartCount: 2,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
	}}
	restarted := newPod
	restarted.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "web", Ready: false, RestartCount: 1,
		State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}},
	}}
	recovered := restarted
	recovered.Status.ContainerStatuses = []corev1.ContainerStatus{restarted.Status.ContainerStatuses[0]}
	recovered.Status.ContainerStatuses[0].Ready = true

	deadline := deployment(2, 2, "2", 1, 1)
	deadline.Status.Conditions[0] = appsv1.DeploymentCondition{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
		Message: `ReplicaSet "web-new" has timed out progressing.`,
	}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

	tests := []struct {
		name   string
		obj    func(t *testing.T) *unstructured.Unstructured
		rel    Related
		want   status.Status
		substr []string // the message must contain each
	}{
		{
			name:   "deployment rolled out",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 3, 3)),
			rel:    Related{Pods: []corev1.Pod{newPod}, ReplicaSets: rss},
			want:   status.CurrentStatus,
			substr: []string{"deployment demo/web: "},
		},
		{
			name:   "deployment mid-rollout",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 1, 3)),
			rel:    Related{Pods: []corev1.Pod{oldPod, newPod}, ReplicaSets: rss},
			want:   status.InProgressStatus,
			substr: []string{"deployment demo/web: Updated: 1/3"},
		},
		{
			name: "deployment new pod crash-looping",
			obj:  obj("apps/v1", "Deployment", deployment(2, 2, "2", 1, 2)),
			rel:  Related{Pods: []corev1.Pod{oldPod, crashLooping(newPod, 3)}, ReplicaSets: rss},
			want: status.FailedStatus,
			substr: []string{
				"deployment demo/web: pod demo/web-new-abcde container web: CrashLoopBackOff (restarts: 3)",
				"last exit code 1 (Error)",
			},
		},
		{
			name:   "deployment old-revision pod crashing does not fail the new revision",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 1, 2)),
			rel:    Related{Pods: []corev1.Pod{crashLooping(oldPod, 5), newPod}, ReplicaSets: rss},
			want:   status.InProgressStatus,
			substr: []string{"Updated: 1/3"},
		},
		{
			name:   "deployment not yet observed: pods of the previous revision are not judged",
			obj:    obj("apps/v1", "Deployment", deployment(3, 2, "2", 3, 2)),
			rel:    Related{Pods: []corev1.Pod{crashLooping(newPod, 5)}, ReplicaSets: rss},
			want:   status.InProgressStatus,
			substr: []string{"generation is 3"},
		},
		{
			name:   "deployment pods of another workload are ignored",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 1, 2)),
			rel:    Related{Pods: []corev1.Pod{crashLooping(otherPod, 5)}, ReplicaSets: rss},
			want:   status.InProgressStatus,
			substr: []string{"Updated: 1/3"},
		},
		{
			name:   "deployment new pod ImagePullBackOff",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 1, 3)),
			rel:    Related{Pods: []corev1.Pod{waiting(newPod, "ImagePullBackOff", `Back-off pulling image "web:nope"`)}, ReplicaSets: rss},
			want:   status.FailedStatus,
			substr: []string{`pod demo/web-new-abcde container web: ImagePullBackOff: Back-off pulling image "web:nope"`},
		},
		{
			name:   "deployment new pod config error",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 1, 3)),
			rel:    Related{Pods: []corev1.Pod{waiting(newPod, "CreateContainerConfigError", `secret "db" not found`)}, ReplicaSets: rss},
			want:   status.FailedStatus,
			substr: []string{"CreateContainerConfigError"},
		},
		{
			name:   "deployment new pod image never pulled",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 1, 3)),
			rel:    Related{Pods: []corev1.Pod{waiting(newPod, "ErrImageNeverPull", `Container image "web:2" is not present with pull policy of Never`)}, ReplicaSets: rss},
			want:   status.FailedStatus,
			substr: []string{`pod demo/web-new-abcde container web: ErrImageNeverPull: Container image "web:2" is not present with pull policy of Never`},
		},
		{
			name:   "deployment new pod init container crash-looping",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 1, 2)),
			rel:    Related{Pods: []corev1.Pod{initCrash}, ReplicaSets: rss},
			want:   status.FailedStatus,
			substr: []string{"pod demo/web-new-abcde init container setup: CrashLoopBackOff (restarts: 2)"},
		},
		{
			name:   "deployment new pod restarted and not ready",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 3, 2)),
			rel:    Related{Pods: []corev1.Pod{restarted}, ReplicaSets: rss},
			want:   status.FailedStatus,
			substr: []string{"container web: restarted after exit code 137 (OOMKilled) (restarts: 1)"},
		},
		{
			name:   "deployment new pod restarted but ready again",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 3, 2)),
			rel:    Related{Pods: []corev1.Pod{recovered}, ReplicaSets: rss},
			want:   status.InProgressStatus,
			substr: []string{"Available: 2/3"},
		},
		{
			name:   "deployment several failing pods are counted",
			obj:    obj("apps/v1", "Deployment", deployment(2, 2, "2", 3, 1)),
			rel:    Related{Pods: []corev1.Pod{crashLooping(newPod, 1), renamed(crashLooping(newPod, 1), "web-new-fghij")}, ReplicaSets: rss},
			want:   status.FailedStatus,
			substr: []string{"pod demo/web-new-abcde", "(and 1 more failing pod)"},
		},
		{
			name:   "deployment progress deadline exceeded, no pod to blame",
			obj:    obj("apps/v1", "Deployment", deadline),
			rel:    Related{ReplicaSets: rss},
			want:   status.FailedStatus,
			substr: []string{`Progress deadline exceeded: ReplicaSet "web-new" has timed out progressing.`},
		},
		{
			name:   "job failed with exit code 1",
			obj:    obj("batch/v1", "Job", job(batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"})),
			rel:    Related{Pods: []corev1.Pod{jobPodExited("migrate-aaaaa", 2, "Error", t0), jobPodExited("migrate-x7k2p", 1, "Error", t0.Add(time.Minute))}},
			want:   status.FailedStatus,
			substr: []string{"job demo/migrate failed: pod demo/migrate-x7k2p container migrate exited with code 1 (Error)"},
		},
		{
			name:   "job failure target before failed",
			obj:    obj("batch/v1", "Job", job(batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"})),
			rel:    Related{Pods: []corev1.Pod{jobPodExited("migrate-x7k2p", 3, "Error", t0)}},
			want:   status.FailedStatus,
			substr: []string{"exited with code 3"},
		},
		{
			name: "job failed just now, failed pod not seen yet",
			obj: obj("batch/v1", "Job", job(batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
				Reason: "BackoffLimitExceeded", LastTransitionTime: metav1.Now()})),
			want:   status.InProgressStatus,
			substr: []string{"waiting for the failed pod's status"},
		},
		{
			name: "job failed, pods gone",
			obj: obj("batch/v1", "Job", job(batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
				Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit",
				LastTransitionTime: metav1.NewTime(time.Now().Add(-10 * time.Second))})),
			want:   status.FailedStatus,
			substr: []string{"job demo/migrate failed: BackoffLimitExceeded: Job has reached the specified backoff limit"},
		},
		{
			name:   "job complete",
			obj:    obj("batch/v1", "Job", job(batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})),
			want:   status.CurrentStatus,
			substr: []string{"job demo/migrate: Job Completed"},
		},
		{
			name:   "job running is not current yet",
			obj:    obj("batch/v1", "Job", job()),
			want:   status.InProgressStatus,
			substr: []string{"job demo/migrate: running: 1 active, 0 succeeded, 0 failed"},
		},
		{
			name: "job pod cannot pull its image",
			obj:  obj("batch/v1", "Job", job()),
			rel: Related{Pods: []corev1.Pod{waiting(
				pod("migrate-x7k2p", controller("Job", "migrate", "job-uid"), nil), "ErrImagePull", "not found")}},
			want:   status.FailedStatus,
			substr: []string{"job demo/migrate: pod demo/migrate-x7k2p container web: ErrImagePull: not found"},
		},
		{
			name:   "daemonset ready",
			obj:    obj("apps/v1", "DaemonSet", daemonSet("2", 2, 2)),
			rel:    Related{Pods: []corev1.Pod{dsPod("agent-a", "2"), dsPod("agent-b", "2")}},
			want:   status.CurrentStatus,
			substr: []string{"daemonset demo/agent: "},
		},
		{
			name:   "daemonset new pod crash-looping",
			obj:    obj("apps/v1", "DaemonSet", daemonSet("2", 1, 1)),
			rel:    Related{Pods: []corev1.Pod{dsPod("agent-a", "1"), crashLooping(dsPod("agent-b", "2"), 2)}},
			want:   status.FailedStatus,
			substr: []string{"daemonset demo/agent: pod demo/agent-b container web: CrashLoopBackOff (restarts: 2)"},
		},
		{
			name:   "daemonset old pod crash-looping",
			obj:    obj("apps/v1", "DaemonSet", daemonSet("2", 1, 1)),
			rel:    Related{Pods: []corev1.Pod{crashLooping(dsPod("agent-a", "1"), 2), dsPod("agent-b", "2")}},
			want:   status.InProgressStatus,
			substr: []string{"Updated: 1/2"},
		},
		{
			name:   "statefulset ready",
			obj:    obj("apps/v1", "StatefulSet", statefulSet("db-old", 0, 2)),
			rel:    Related{Pods: []corev1.Pod{stsPod("db-0", "db-old"), stsPod("db-1", "db-old")}},
			want:   status.CurrentStatus,
			substr: []string{"statefulset demo/db: "},
		},
		{
			name:   "statefulset updated pod crash-looping",
			obj:    obj("apps/v1", "StatefulSet", statefulSet("db-new", 1, 1)),
			rel:    Related{Pods: []corev1.Pod{stsPod("db-0", "db-old"), crashLooping(stsPod("db-1", "db-new"), 4)}},
			want:   status.FailedStatus,
			substr: []string{"statefulset demo/db: pod demo/db-1 container web: CrashLoopBackOff (restarts: 4)"},
		},
		{
			name:   "statefulset old pod crash-looping",
			obj:    obj("apps/v1", "StatefulSet", statefulSet("db-new", 1, 1)),
			rel:    Related{Pods: []corev1.Pod{crashLooping(stsPod("db-0", "db-old"), 4), stsPod("db-1", "db-new")}},
			want:   status.InProgressStatus,
			substr: []string{"statefulset demo/db: Ready: 1/2"},
		},
		{
			name:   "crd established",
			obj:    crd("True", "True"),
			want:   status.CurrentStatus,
			substr: []string{"customresourcedefinition widgets.example.com: CRD is established"},
		},
		{
			name:   "crd names not accepted",
			obj:    crd("False", "False"),
			want:   status.FailedStatus,
			substr: []string{"customresourcedefinition widgets.example.com: "},
		},
		{
			name:   "bare pod ready",
			obj:    obj("v1", "Pod", ptr(newPod)),
			want:   status.CurrentStatus,
			substr: []string{"pod demo/web-new-abcde: Pod is Ready"},
		},
		{
			name:   "bare pod cannot pull its image",
			obj:    obj("v1", "Pod", ptr(notReady(waiting(newPod, "ImagePullBackOff", "")))),
			want:   status.FailedStatus,
			substr: []string{"pod demo/web-new-abcde: pod demo/web-new-abcde container web: ImagePullBackOff"},
		},
		{
			name:   "configmap is always current",
			obj:    obj("v1", "ConfigMap", &corev1.ConfigMap{}),
			want:   status.CurrentStatus,
			substr: []string{"configmap "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Evaluate(tt.obj(t), tt.rel)
			if h.Status != tt.want {
				t.Errorf("status = %s, want %s (message %q)", h.Status, tt.want, h.Message)
			}
			for _, s := range tt.substr {
				if !strings.Contains(h.Message, s) {
					t.Errorf("message %q does not contain %q", h.Message, s)
				}
			}
			if h.Failing() != (tt.want == status.FailedStatus) || h.Current() != (tt.want == status.CurrentStatus) {
				t.Errorf("Failing()=%t Current()=%t for %s", h.Failing(), h.Current(), h.Status)
			}
		})
	}
}

func obj(apiVersion, kind string, o any) func(t *testing.T) *unstructured.Unstructured {
	return func(t *testing.T) *unstructured.Unstructured { return toUnstructured(t, apiVersion, kind, o) }
}

func notReady(p corev1.Pod) corev1.Pod {
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = nil
	return p
}

func renamed(p corev1.Pod, name string) corev1.Pod {
	p.Name = name
	return p
}

// crd is built by hand: the apiextensions types are not worth a module.
func crd(namesAccepted, established string) func(t *testing.T) *unstructured.Unstructured {
	return func(t *testing.T) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": "widgets.example.com", "generation": int64(1)},
			"status": map[string]any{"conditions": []any{
				map[string]any{"type": "NamesAccepted", "status": namesAccepted, "reason": "NoConflicts", "message": "no conflicts found"},
				map[string]any{"type": "Established", "status": established, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
			}},
		}}
	}
}
