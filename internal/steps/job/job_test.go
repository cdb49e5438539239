package job_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
	"github.com/upshift-dev/upshift/internal/steps/job"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fakeLogLine is part of what the local cluster's fake kubelet serves as
// every container's log.
const fakeLogLine = "this container runs on a kwok fake node"

// jobYAML is a migration Job; the image tag decides its fate on the fake
// nodes: a tag containing "fail" exits 1.
func jobYAML(ns, name, image, extraPodSpec string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %s, namespace: %s}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
%s      containers:
      - name: migrate
        image: %s
        args: ["--to=latest"]
        env: [{name: DB_PASSWORD, value: "s3cr3t-hunter2"}]
`, name, ns, extraPodSpec, image)
}

// attempt1 and attempt2 are two attempts of one run (apply --retry).
var (
	attempt1 = step.RunAttempt{Run: "shop-2.0.0", Attempt: 1}
	attempt2 = step.RunAttempt{Run: "shop-2.0.0", Attempt: 2}
)

func newStep(t *testing.T, e *clienttest.Env, y string, timeout time.Duration) *job.Executor {
	t.Helper()
	ex, err := job.New(v1alpha1.JobStep{}, clienttest.Objects(t, y), timeout, attempt1, e.Applier, e.Waiter, e.Clientset)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// pods lists the namespace's pods: every pod any Job of the test made.
func pods(t *testing.T, e *clienttest.Env) []corev1.Pod {
	t.Helper()
	list, err := e.Clientset.CoreV1().Pods(e.NS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func jobUID(t *testing.T, e *clienttest.Env, name string) types.UID {
	t.Helper()
	j, err := e.Clientset.BatchV1().Jobs(e.NS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return j.UID
}

func TestJobCompletesAndIsNotRunTwice(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	// Built the way the runner builds it.
	ex, err := steps.New(steps.Input{Spec: v1alpha1.Step{Name: "migrate", Job: &v1alpha1.JobStep{}},
		Objects: clienttest.Objects(t, jobYAML(e.NS, "migrate-v2", "registry.example/migrate:v2", "")), Timeout: 2 * time.Minute, Attempt: attempt1}, e.Set)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := ex.Targets(ctx)
	if err != nil || fmt.Sprint(targets) != fmt.Sprintf("[job %s/migrate-v2]", e.NS) {
		t.Errorf("Targets = %v, %v", targets, err)
	}

	res, err := ex.Run(ctx)
	if err != nil || res != step.Success("job %s/migrate-v2 completed", e.NS) {
		t.Fatalf("Run = %+v, %v; want Succeeded", res, err)
	}
	uid := jobUID(t, e, "migrate-v2")
	if n := len(pods(t, e)); n != 1 {
		t.Fatalf("%d pods after the first run, want 1", n)
	}

	// A resumed run finds the completed Job and runs nothing.
	res, err = ex.Run(ctx)
	if err != nil || res != step.Success("job %s/migrate-v2 already completed; not run again", e.NS) {
		t.Fatalf("second Run = %+v, %v; want Succeeded without running", res, err)
	}
	if got := jobUID(t, e, "migrate-v2"); got != uid {
		t.Errorf("the Job was recreated: uid %s, was %s", got, uid)
	}
	if n := len(pods(t, e)); n != 1 {
		t.Errorf("%d pods after the second run, want still 1", n)
	}

	// The next attempt (apply --retry, after a rollback that ran the
	// down-migration) runs the migration again, in a Job of its own.
	ex2, err := steps.New(steps.Input{Spec: v1alpha1.Step{Name: "migrate", Job: &v1alpha1.JobStep{}},
		Objects: clienttest.Objects(t, jobYAML(e.NS, "migrate-v2", "registry.example/migrate:v2", "")), Timeout: 2 * time.Minute, Attempt: attempt2}, e.Set)
	if err != nil {
		t.Fatal(err)
	}
	res, err = ex2.Run(ctx)
	if err != nil || res != step.Success("job %s/migrate-v2 completed (the Job of attempt 1 was deleted and run again)", e.NS) {
		t.Fatalf("Run of attempt 2 = %+v, %v; want the migration run again", res, err)
	}
	if got := jobUID(t, e, "migrate-v2"); got == uid {
		t.Errorf("attempt 2 did not create a Job of its own")
	}
	assertAttempt(t, e, "migrate-v2", "2")
}

// assertAttempt fails unless the Job carries the run attempt that made it.
func assertAttempt(t *testing.T, e *clienttest.Env, name, attempt string) {
	t.Helper()
	j, err := e.Clientset.BatchV1().Jobs(e.NS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Annotations[job.AnnotationRun] + " " + j.Annotations[job.AnnotationAttempt]; got != "shop-2.0.0 "+attempt {
		t.Errorf("Job %s is marked %q, want run shop-2.0.0 attempt %s", name, got, attempt)
	}
}

func TestJobFailureCarriesExitCodeAndLog(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	ex := newStep(t, e, jobYAML(e.NS, "migrate-v3", "registry.example/migrate:v3-fail", ""), 2*time.Minute)

	start := time.Now()
	res, err := ex.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Run: %s: %s", res.Status, res.Message)
	if res.Status != step.Failed {
		t.Fatalf("Run = %+v, want Failed", res)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Run took %s with a 2m timeout: it did not fail early", d)
	}
	for _, s := range []string{
		"job " + e.NS + "/migrate-v3 failed",
		"pod " + e.NS + "/migrate-v3-",
		"container migrate exited with code 1",
		"delete job " + e.NS + "/migrate-v3",
		"last log lines of pod " + e.NS + "/migrate-v3-",
		fakeLogLine,
	} {
		if !strings.Contains(res.Message, s) {
			t.Errorf("message does not contain %q", s)
		}
	}
	if strings.Contains(res.Message, "s3cr3t-hunter2") {
		t.Errorf("message shows an env value: %s", res.Message)
	}

	// A resumed run reports the same failure without running the Job again.
	uid := jobUID(t, e, "migrate-v3")
	again, err := ex.Run(ctx)
	if err != nil || again.Status != step.Failed || !strings.Contains(again.Message, "exited with code 1") || !strings.Contains(again.Message, fakeLogLine) {
		t.Errorf("second Run = %+v, %v; want the same failure", again, err)
	}
	if got := jobUID(t, e, "migrate-v3"); got != uid {
		t.Errorf("the failed Job was recreated by a resumed run")
	}
	if n := len(pods(t, e)); n != 1 {
		t.Errorf("%d pods after the second run, want 1", n)
	}

	// What the message says to do: delete the Job and the step runs it anew.
	fg := metav1.DeletePropagationForeground
	if err := e.Clientset.BatchV1().Jobs(e.NS).Delete(ctx, "migrate-v3", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	third, err := ex.Run(ctx)
	if err != nil || third.Status != step.Failed || !strings.Contains(third.Message, "exited with code 1") {
		t.Errorf("Run after deleting the Job = %+v, %v; want it run again (and fail again)", third, err)
	}
	if got := jobUID(t, e, "migrate-v3"); got == uid {
		t.Errorf("after deleting the Job, Run did not create a new one")
	}
}

func TestJobWithADifferentSpec(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	v1 := jobYAML(e.NS, "migrate", "registry.example/migrate:v1", "")
	if res, err := newStep(t, e, v1, 2*time.Minute).Run(ctx); err != nil || res.Status != step.Succeeded {
		t.Fatalf("v1: Run = %+v, %v", res, err)
	}

	for _, tt := range []struct{ name, yaml string }{
		{"another image", jobYAML(e.NS, "migrate", "registry.example/migrate:v2", "")},
		{"another backoffLimit", strings.Replace(v1, "backoffLimit: 0", "backoffLimit: 2", 1)},
	} {
		res, err := newStep(t, e, tt.yaml, 2*time.Minute).Run(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		t.Logf("%s: Run: %s: %s", tt.name, res.Status, res.Message)
		if res.Status != step.Failed || !strings.Contains(res.Message, "job "+e.NS+"/migrate already exists with a different spec") ||
			!strings.Contains(res.Message, "give the new migration a new Job name") {
			t.Errorf("%s: Run = %+v, want Failed naming the fix", tt.name, res)
		}
	}
	j, err := e.Clientset.BatchV1().Jobs(e.NS).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := j.Spec.Template.Spec.Containers[0].Image; img != "registry.example/migrate:v1" || *j.Spec.BackoffLimit != 0 {
		t.Errorf("the existing Job changed: image %s, backoffLimit %d", img, *j.Spec.BackoffLimit)
	}
	if n := len(pods(t, e)); n != 1 {
		t.Errorf("%d pods, want the v1 Job's 1", n)
	}
}

// A Job created by someone else with the step's spec is the step's Job:
// defaults the server filled in do not make it "different".
func TestJobCreatedElsewhereWithTheSameSpec(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	y := jobYAML(e.NS, "migrate", "registry.example/migrate:v2", "")
	obj := clienttest.Objects(t, y)[0]
	if _, err := e.Dynamic.Resource(batchJobs).Namespace(e.NS).Create(ctx, obj, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	uid := jobUID(t, e, "migrate")
	res, err := newStep(t, e, y, 2*time.Minute).Run(ctx)
	if err != nil || res.Status != step.Succeeded {
		t.Fatalf("Run = %+v, %v; want Succeeded", res, err)
	}
	if got := jobUID(t, e, "migrate"); got != uid {
		t.Errorf("the Job was recreated")
	}
	if n := len(pods(t, e)); n != 1 {
		t.Errorf("%d pods, want 1", n)
	}
}

// A completed Job of the step's name that another run created is not this
// run's migration (that run's rollback may have undone it): refused,
// naming the run, and left as it is.
func TestJobOfAnotherRunIsRefused(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	y := jobYAML(e.NS, "migrate", "registry.example/migrate:v2", "")
	other, err := job.New(v1alpha1.JobStep{}, clienttest.Objects(t, y), 2*time.Minute, step.RunAttempt{Run: "shop-2.0.0-again", Attempt: 1}, e.Applier, e.Waiter, e.Clientset)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := other.Run(ctx); err != nil || res.Status != step.Succeeded {
		t.Fatalf("the other run's Job: %+v, %v", res, err)
	}
	uid := jobUID(t, e, "migrate")
	res, err := newStep(t, e, y, 2*time.Minute).Run(ctx)
	if err != nil || res.Status != step.Failed || !strings.Contains(res.Message, "created by run shop-2.0.0-again, attempt 1") || !strings.Contains(res.Message, "delete that Job") {
		t.Fatalf("Run = %+v, %v; want a failure naming the other run and the fix", res, err)
	}
	if got := jobUID(t, e, "migrate"); got != uid {
		t.Errorf("the other run's Job was replaced")
	}
}

// Pods that cannot be scheduled: the Job never ends and never fails.
func TestJobTimeout(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	y := jobYAML(e.NS, "migrate", "registry.example/migrate:v2", "      nodeSelector: {upshift.test/none: \"true\"}\n")
	start := time.Now()
	res, err := newStep(t, e, y, 3*time.Second).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Run: %s: %s", res.Status, res.Message)
	if res.Status != step.Failed || !strings.HasPrefix(res.Message, "timed out after 3s: job "+e.NS+"/migrate") {
		t.Errorf("Run = %+v, want Failed: timed out after 3s: job %s/migrate…", res, e.NS)
	}
	if !strings.Contains(res.Message, "is not scheduled: Unschedulable") {
		t.Errorf("message %q does not say the pod is not scheduled", res.Message)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("Run took %s with a 3s timeout", d)
	}
}

func TestRunRollbackJob(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	spec := v1alpha1.JobStep{RollbackJob: &v1alpha1.Source{Inline: "…"}}
	objs := clienttest.Objects(t, jobYAML(e.NS, "migrate-v2-down", "registry.example/migrate:v1", ""))
	// A rollback resumed within its attempt does not run it twice.
	for run := 1; run <= 2; run++ {
		res, err := job.RunRollbackJob(ctx, spec, objs, 2*time.Minute, attempt1, e.Applier, e.Waiter, e.Clientset)
		if err != nil || res.Status != step.Succeeded || !strings.Contains(res.Message, "job "+e.NS+"/migrate-v2-down") {
			t.Fatalf("run %d: RunRollbackJob = %+v, %v", run, res, err)
		}
	}
	if n := len(pods(t, e)); n != 1 {
		t.Errorf("%d pods after two rollbacks, want 1", n)
	}
	uid := jobUID(t, e, "migrate-v2-down")

	// The rollback of the next attempt runs the down-migration again.
	res, err := job.RunRollbackJob(ctx, spec, objs, 2*time.Minute, attempt2, e.Applier, e.Waiter, e.Clientset)
	if err != nil || res != step.Success("job %s/migrate-v2-down completed (the Job of attempt 1 was deleted and run again)", e.NS) {
		t.Fatalf("rollback of attempt 2: RunRollbackJob = %+v, %v; want the down-migration run again", res, err)
	}
	if jobUID(t, e, "migrate-v2-down") == uid {
		t.Errorf("the rollback of attempt 2 did not create a Job of its own")
	}
	assertAttempt(t, e, "migrate-v2-down", "2")

	// Another run's down-migration Job is not this rollback's: the
	// rollback fails rather than report a down-migration it did not run.
	res, err = job.RunRollbackJob(ctx, spec, objs, 2*time.Minute, step.RunAttempt{Run: "shop-3.0.0", Attempt: 1}, e.Applier, e.Waiter, e.Clientset)
	if err != nil || res.Status != step.Failed ||
		!strings.Contains(res.Message, "job "+e.NS+"/migrate-v2-down exists and this rollback did not create it (it was created by run shop-2.0.0, attempt 2)") ||
		!strings.Contains(res.Message, "delete that Job") {
		t.Errorf("rollback of another run: RunRollbackJob = %+v, %v; want Failed naming the Job and the fix", res, err)
	}
	assertAttempt(t, e, "migrate-v2-down", "2") // left alone

	res, err = job.RunRollbackJob(ctx, v1alpha1.JobStep{}, nil, time.Minute, attempt1, e.Applier, e.Waiter, e.Clientset)
	if err != nil || res != step.Success("the step has no rollbackJob") {
		t.Errorf("without a rollbackJob: %+v, %v", res, err)
	}
	_, err = job.RunRollbackJob(ctx, spec, nil, time.Minute, attempt1, e.Applier, e.Waiter, e.Clientset)
	if !errors.Is(err, job.ErrInvalidJob) {
		t.Errorf("a rollbackJob source with no objects: %v, want ErrInvalidJob", err)
	}
}

var batchJobs = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
