package job

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/step"
)

func decode(t *testing.T, y string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := source.Decode([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

const validJob = `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: demo}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "db:v2"}]
`

func TestNewChecksTheSource(t *testing.T) {
	tests := []struct {
		name, yaml string
		src        v1alpha1.Source
		mutate     func(*unstructured.Unstructured) // source.Decode itself refuses some
		want       string                           // "" for no error
	}{
		{name: "a Job", yaml: validJob},
		{name: "nothing", yaml: "", want: "job from inline YAML: invalid job source: it holds 0 objects, want exactly one Job"},
		{name: "two Jobs", yaml: validJob + "---\n" + validJob, want: "it holds 2 objects, want exactly one Job"},
		{name: "a ConfigMap", yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: migrate, namespace: demo}\n",
			want: "it holds a v1 ConfigMap, want a batch/v1 Job"},
		{name: "a Job of another group", yaml: "apiVersion: example.com/v1\nkind: Job\nmetadata: {name: migrate, namespace: demo}\n",
			want: "it holds a example.com/v1 Job, want a batch/v1 Job"},
		{name: "no namespace", yaml: strings.Replace(validJob, ", namespace: demo", "", 1), want: "metadata.namespace is required"},
		{name: "generateName", yaml: validJob, mutate: func(u *unstructured.Unstructured) { u.SetName(""); u.SetGenerateName("migrate-") },
			want: "metadata.name is required (a resumed run finds its Job by name)"},
		{name: "a URL with a token", yaml: "", src: v1alpha1.Source{URL: "https://example.com/job.yaml?token=abc"},
			want: "job from url https://example.com/job.yaml?xxxxx: invalid job source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := decode(t, tt.yaml)
			if tt.mutate != nil {
				tt.mutate(objs[0])
			}
			e, err := New(v1alpha1.JobStep{Source: tt.src}, objs, time.Minute, step.RunAttempt{}, &kube.Applier{}, nil, nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New = %v", err)
				}
				if e.ref.String() != "job demo/migrate" {
					t.Errorf("ref = %s", e.ref)
				}
				return
			}
			if !errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want ErrInvalidJob containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "token=abc") {
				t.Errorf("error shows the URL's token: %v", err)
			}
		})
	}
	if _, err := New(v1alpha1.JobStep{}, decode(t, validJob), 0, step.RunAttempt{}, &kube.Applier{}, nil, nil); !errors.Is(err, ErrNoTimeout) {
		t.Errorf("New with no timeout = %v, want ErrNoTimeout", err)
	}
}

func TestLastFailure(t *testing.T) {
	at := func(sec int) metav1.Time { return metav1.NewTime(time.Unix(int64(sec), 0)) }
	pod := func(name string, created int, phase corev1.PodPhase, statuses ...corev1.ContainerStatus) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", CreationTimestamp: at(created)},
			Status:     corev1.PodStatus{Phase: phase, ContainerStatuses: statuses},
		}
	}
	exited := func(name string, code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}}
	}
	restarted := corev1.ContainerStatus{Name: "migrate", RestartCount: 1,
		State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}
	evicted := pod("evicted", 3, corev1.PodFailed)
	evicted.Status.Reason, evicted.Status.Message = "Evicted", "low on memory"

	tests := []struct {
		name     string
		pods     []corev1.Pod
		want     string
		previous bool
	}{
		{name: "none", pods: nil},
		{name: "succeeded", pods: []corev1.Pod{pod("a", 1, corev1.PodSucceeded, exited("migrate", 0))}},
		{name: "the most recent failure", pods: []corev1.Pod{
			pod("a", 1, corev1.PodFailed, exited("migrate", 1)),
			pod("b", 2, corev1.PodFailed, exited("migrate", 3)),
			pod("c", 3, corev1.PodRunning),
		}, want: "pod demo/b container migrate exited with code 3 (Error)"},
		{name: "a restarted container", pods: []corev1.Pod{pod("a", 1, corev1.PodRunning, restarted)},
			want: "pod demo/a container migrate exited with code 2 (Error)", previous: true},
		{name: "a pod failed as a whole", pods: []corev1.Pod{evicted}, want: "pod demo/evicted failed: Evicted: low on memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, ok := lastFailure(tt.pods)
			if tt.want == "" {
				if ok {
					t.Errorf("lastFailure = %s, want none", x)
				}
				return
			}
			if !ok || x.String() != tt.want || x.previous != tt.previous {
				t.Errorf("lastFailure = %s (previous %t), %t; want %s (previous %t)", x, x.previous, ok, tt.want, tt.previous)
			}
		})
	}
}

func TestNotRunning(t *testing.T) {
	pending := func(conds []corev1.PodCondition, statuses ...corev1.ContainerStatus) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "demo"},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: conds, ContainerStatuses: statuses}}
	}
	unscheduled := []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}
	pulling := corev1.ContainerStatus{Name: "migrate", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	running := corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	tests := []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{name: "none", want: ""},
		{name: "running", pods: []corev1.Pod{running}, want: ""},
		{name: "unscheduled", pods: []corev1.Pod{running, pending(unscheduled)}, want: "pod demo/p is not scheduled: Unschedulable: 0/3 nodes are available"},
		{name: "creating", pods: []corev1.Pod{pending(nil, pulling)}, want: "pod demo/p container migrate is waiting: ContainerCreating"},
		{name: "just pending", pods: []corev1.Pod{pending(nil)}, want: "pod demo/p is pending"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := notRunning(tt.pods); got != tt.want {
				t.Errorf("notRunning = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOriginOf(t *testing.T) {
	at := step.RunAttempt{Run: "shop-2.0.0", Attempt: 2}
	mark := func(run, attempt string) map[string]string {
		return map[string]string{AnnotationRun: run, AnnotationAttempt: attempt}
	}
	tests := []struct {
		name string
		ann  map[string]string
		at   step.RunAttempt
		want origin
	}{
		{"this attempt", mark("shop-2.0.0", "2"), at, ours},
		{"an earlier attempt", mark("shop-2.0.0", "1"), at, earlierAttempt},
		{"another run", mark("shop-3.0.0", "2"), at, foreign},
		{"unmarked", nil, at, foreign},
		{"only the attempt", map[string]string{AnnotationAttempt: "2"}, at, foreign},
		{"nothing keyed: every Job is ours", mark("shop-3.0.0", "1"), step.RunAttempt{}, ours},
	}
	for _, tt := range tests {
		if got := originOf(tt.ann, tt.at); got != tt.want {
			t.Errorf("%s: originOf = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestMarkedCopiesTheJob(t *testing.T) {
	j := decode(t, validJob)[0]
	m := marked(j, step.RunAttempt{Run: "shop-2.0.0", Attempt: 3})
	if got := m.GetAnnotations(); got[AnnotationRun] != "shop-2.0.0" || got[AnnotationAttempt] != "3" {
		t.Errorf("marked annotations = %v", got)
	}
	if len(j.GetAnnotations()) != 0 {
		t.Errorf("marked changed the plan's Job: %v", j.GetAnnotations())
	}
	if marked(j, step.RunAttempt{}) != j {
		t.Errorf("a zero attempt should leave the Job as it is")
	}
}

// A rollback whose down-migration source is not saved with the run fails
// before anything runs, saying how to save it.
func TestReverterWithoutItsSourceFails(t *testing.T) {
	r := NewReverter(v1alpha1.JobStep{RollbackJob: &v1alpha1.Source{Path: "down.yaml"}}, nil, time.Minute, step.RunAttempt{Run: "shop-2", Attempt: 1}, nil, nil, nil)
	done, err := r.Revert(t.Context(), &v1alpha1.BackupRef{})
	if err != nil || done.Status != step.Failed || !strings.Contains(done.Message, "apply the plan again to save its sources") {
		t.Errorf("Revert = %+v, %v; want Failed saying how to save the source", done, err)
	}
}
