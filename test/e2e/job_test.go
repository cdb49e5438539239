package e2e

import (
	"errors"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/kube"
)

func job(name, image string, backoffLimit int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr(backoffLimit),
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "migrate", Image: image}},
				},
			},
		},
	}
}

func jobCondition(j *batchv1.Job, typ batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestJobCompletes: a Job is Current once it has completed, not merely
// started.
func TestJobCompletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	if _, err := e.cs.BatchV1().Jobs(e.ns).Create(e.ctx, job("migrate", "example.com/migrate:1.0", 0), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create job: %v", err)
	}
	h, err := e.w.WaitCurrent(e.ctx, kube.ObjectRef{APIVersion: "batch/v1", Kind: "Job", Namespace: e.ns, Name: "migrate"}, waitTimeout)
	if err != nil {
		t.Fatalf("wait job: %v", err)
	}
	t.Logf("job: %s", h)
	j, err := e.cs.BatchV1().Jobs(e.ns).Get(e.ctx, "migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !jobCondition(j, batchv1.JobComplete) || j.Status.Succeeded != 1 {
		t.Errorf("job judged Current but conditions %+v, succeeded %d; want Complete and 1 succeeded", j.Status.Conditions, j.Status.Succeeded)
	}
}

// TestJobFails: a Job whose pod exits 1 (backoffLimit 0) fails the wait
// with ErrFailing, and the error names the pod and its exit code.
func TestJobFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	if _, err := e.cs.BatchV1().Jobs(e.ns).Create(e.ctx, job("migrate", "example.com/migrate:1.0-fail", 0), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create job: %v", err)
	}
	h, err := e.w.WaitCurrent(e.ctx, kube.ObjectRef{APIVersion: "batch/v1", Kind: "Job", Namespace: e.ns, Name: "migrate"}, waitTimeout)
	if err == nil {
		t.Fatalf("wait job: no error, health %s; want it failing", h)
	}
	t.Logf("job wait error: %v", err)
	if !errors.Is(err, kube.ErrFailing) || errors.Is(err, kube.ErrTimeout) {
		t.Fatalf("error %q: errors.Is(ErrFailing)=%t, want true", err, errors.Is(err, kube.ErrFailing))
	}
	var nre *kube.NotReadyError
	if !errors.As(err, &nre) || !nre.Health.Failing() {
		t.Errorf("error %q is not a *NotReadyError with a Failed health", err)
	}
	if !h.Failing() {
		t.Errorf("returned health %s, want Failed", h)
	}

	j, err2 := e.cs.BatchV1().Jobs(e.ns).Get(e.ctx, "migrate", metav1.GetOptions{})
	if err2 != nil {
		t.Fatal(err2)
	}
	if !jobCondition(j, batchv1.JobFailed) && !jobCondition(j, batchv1.JobFailureTarget) {
		t.Errorf("job conditions %+v, want Failed or FailureTarget", j.Status.Conditions)
	}
	// The pod itself, read independently of the Waiter.
	pods, err2 := e.cs.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=migrate"})
	if err2 != nil {
		t.Fatal(err2)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("job has %d pods %s, want 1 (backoffLimit 0)", len(pods.Items), podNames(pods.Items))
	}
	p := pods.Items[0]
	if p.Status.Phase != corev1.PodFailed {
		t.Errorf("pod %s phase %s, want Failed", p.Name, p.Status.Phase)
	}
	if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("pod %s container statuses %+v, want one terminated container", p.Name, p.Status.ContainerStatuses)
	}
	if code := p.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != 1 {
		t.Errorf("pod %s exit code %d, want 1", p.Name, code)
	}
	msg := err.Error()
	for _, want := range []string{"job " + e.ns + "/migrate", e.ns + "/" + p.Name, "container migrate", "code 1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}
