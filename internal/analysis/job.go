package analysis

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// ErrPending: the measurement is under way (its Job runs). Nothing is
// recorded; the caller asks again later, and the same Job answers.
var ErrPending = errors.New("measurement under way")

// defaultJobTimeout bounds a Job measurement without spec.timeout.
const defaultJobTimeout = 5 * time.Minute

// JobRun is where a Job metric's measurement runs: one Job per
// measurement, its name unique to it, so a measurement asked again (the
// next reconcile, a restarted controller) finds its own Job.
type JobRun struct {
	Client      kubernetes.Interface
	Namespace   string
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	Owners      []metav1.OwnerReference
}

// job measures by running a Job: result is its container's exit code.
type job struct {
	spec v1alpha1.JobMetric
	run  JobRun
}

// NewJob is the provider of a Job metric, measured in run.
func NewJob(spec v1alpha1.JobMetric, run JobRun) Provider { return &job{spec: spec, run: run} }

func (j *job) timeout() time.Duration {
	if j.spec.Timeout != nil && j.spec.Timeout.Duration > 0 {
		return j.spec.Timeout.Duration
	}
	return defaultJobTimeout
}

// Measure creates the measurement's Job the first time (ErrPending),
// answers ErrPending while it runs, and its exit code once it ended.
func (j *job) Measure(ctx context.Context, now time.Time) (any, error) {
	jobs := j.run.Client.BatchV1().Jobs(j.run.Namespace)
	got, err := jobs.Get(ctx, j.run.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := jobs.Create(ctx, j.manifest(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create job %s: %w", j.run.Name, err)
		}
		return nil, ErrPending
	}
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", j.run.Name, err)
	}
	switch {
	case jobEnded(got, batchv1.JobComplete) != "":
		return j.exitCode(ctx, 0)
	case jobEnded(got, batchv1.JobFailed) == batchv1.JobReasonDeadlineExceeded:
		return nil, fmt.Errorf("job %s did not end within %s", j.run.Name, j.timeout())
	case jobEnded(got, batchv1.JobFailed) != "":
		return j.exitCode(ctx, 1)
	}
	// Past the deadline the Job fails itself (activeDeadlineSeconds);
	// a Job never scheduled is given up on a little later.
	if now.Sub(got.CreationTimestamp.Time) > j.timeout()+time.Minute {
		return nil, fmt.Errorf("job %s did not end within %s", j.run.Name, j.timeout())
	}
	return nil, ErrPending
}

// exitCode is the exit code of the Job's container as its pod reports
// it, or otherwise (the pod gone) what the Job's end says.
func (j *job) exitCode(ctx context.Context, otherwise int) (any, error) {
	pods, err := j.run.Client.CoreV1().Pods(j.run.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + j.run.Name})
	if err != nil {
		return nil, fmt.Errorf("read the pods of job %s: %w", j.run.Name, err)
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if t := c.State.Terminated; t != nil {
				return float64(t.ExitCode), nil
			}
		}
	}
	return float64(otherwise), nil
}

// jobEnded is the reason of the Job's condition t when it holds ("":
// it does not; "ended" when it holds without a reason).
func jobEnded(j *batchv1.Job, t batchv1.JobConditionType) string {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			if c.Reason == "" {
				return "ended"
			}
			return c.Reason
		}
	}
	return ""
}

// manifest is the measurement's Job: run once (no retry: a retry would
// be another measurement), ended by its deadline, removed an hour after
// it ended (its result is in status by then).
func (j *job) manifest() *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: j.run.Name, Namespace: j.run.Namespace, Labels: j.run.Labels,
			Annotations: j.run.Annotations, OwnerReferences: j.run.Owners},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](0),
			ActiveDeadlineSeconds:   ptr.To(int64(j.timeout().Seconds())),
			TTLSecondsAfterFinished: ptr.To[int32](3600),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: j.run.Labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "metric", Image: j.spec.Image, Command: j.spec.Command, Args: j.spec.Args, Env: j.spec.Env,
					}},
				},
			},
		},
	}
}
