package distribute_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/distribute"
)

// One Job per node in embedded-cluster's shape, pinned to its node, the
// node's data directory mounted, the license read from a Secret the step
// made first; the step waits for all, then deletes the Jobs and the
// Secret. A node that joins meanwhile gets its Job too.
func TestDistributeRunsOneJobPerNodeThenCleansUp(t *testing.T) {
	e := newEnv(t)
	ex := executor(t, e, spec(e.NS, "example.com/ec/local-artifact-mirror:2.17.1"), 1)
	res, err := ex.Run(context.Background())
	if err != nil || res.Status != step.Running || !strings.Contains(res.Message, "starting: node-0, node-1, node-2") {
		t.Fatalf("first look: %+v, %v", res, err)
	}
	js := jobs(t, e)
	if len(js) != 3 {
		t.Fatalf("%d Jobs, want one per node (3)", len(js))
	}
	var stepSecret string
	for _, j := range js {
		node := strings.TrimPrefix(j.Name, "copy-artifacts-")
		pod := j.Spec.Template.Spec
		c := pod.Containers[0]
		switch {
		case pod.NodeName != node || pod.RestartPolicy != corev1.RestartPolicyNever:
			t.Errorf("Job %s runs on %q (%s), want pinned to %s, never restarted", j.Name, pod.NodeName, pod.RestartPolicy, node)
		case *j.Spec.BackoffLimit != 2 || j.Labels["app.kubernetes.io/component"] != "upgrader":
			t.Errorf("Job %s: backoffLimit %d, labels %v", j.Name, *j.Spec.BackoffLimit, j.Labels)
		case j.Annotations[distribute.HashAnnotation] != configHash(t) || j.Annotations[distribute.InstallationAnnotation] != "20261129120000":
			t.Errorf("Job %s annotations %v, want the installation and hash %s", j.Name, j.Annotations, configHash(t))
		case pod.Volumes[0].HostPath == nil || pod.Volumes[0].HostPath.Path != "/var/lib/embedded-cluster" || *pod.Volumes[0].HostPath.Type != corev1.HostPathDirectory ||
			c.VolumeMounts[0].MountPath != "/embedded-cluster" || c.VolumeMounts[0].ReadOnly:
			t.Errorf("Job %s mounts %+v at %+v", j.Name, pod.Volumes, c.VolumeMounts)
		case c.Name != distribute.Container || env(c, "INSTALLATION").Value != "20261129120000" || env(c, "APP_SLUG").Value != "shop" || !strings.Contains(env(c, "ARTIFACTS").Value, "registry.example/ec/k0s:1.34"):
			t.Errorf("Job %s container %s env %+v", j.Name, c.Name, c.Env)
		}
		lic := env(c, "LOCAL_ARTIFACT_MIRROR_LICENSE_ID")
		if lic == nil || lic.ValueFrom == nil || lic.ValueFrom.SecretKeyRef == nil || lic.ValueFrom.SecretKeyRef.Name == "license" {
			t.Fatalf("Job %s reads the license %+v: want the step's own Secret", j.Name, lic)
		}
		stepSecret = lic.ValueFrom.SecretKeyRef.Name
	}
	s, err := e.Clientset.CoreV1().Secrets(e.NS).Get(context.Background(), stepSecret, metav1.GetOptions{})
	if err != nil || string(s.Data["LOCAL_ARTIFACT_MIRROR_LICENSE_ID"]) != "lic-123" || len(s.Data) != 1 {
		t.Fatalf("the step's Secret %s: %v %v", stepSecret, s, err)
	}

	if err := localcluster.AddNodes(context.Background(), e.Clientset, 4); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Clientset.CoreV1().Nodes().Delete(context.Background(), "node-3", metav1.DeleteOptions{})
	})
	res = drive(t, ex)
	if res.Status != step.Succeeded || !strings.Contains(res.Message, "every node (4: node-0, node-1, node-2, node-3)") {
		t.Fatalf("result %+v, want every node, node-3 that joined too", res)
	}
	if left := jobs(t, e); len(left) != 0 {
		t.Errorf("%d Jobs left after success", len(left))
	}
	if slices.Contains(secrets(t, e), stepSecret) {
		t.Error("the step's Secret is left after success")
	}
}

// A Job that fails fails the step, naming its node and what its pod
// logged; the Reverter then deletes every Job and the Secret.
func TestDistributeFailsNamingTheNodeAndRevertCleansUp(t *testing.T) {
	e := newEnv(t)
	s := spec(e.NS, "example.com/ec/local-artifact-mirror:fail")
	zero := int32(0)
	s.BackoffLimit = &zero
	ex := executor(t, e, s, 1)
	res := drive(t, ex)
	if res.Status != step.Failed || !contains(res.Message, "the Job of node node-", "failed: BackoffLimitExceeded", "logged:") {
		t.Fatalf("result %+v, want the failed node, why, and its log", res)
	}
	if len(jobs(t, e)) == 0 {
		t.Fatal("the failed Jobs were deleted before the rollback: an operator may read them")
	}
	done, err := distribute.NewReverter(ex).Revert(context.Background(), nil)
	if err != nil || done.Status != step.Succeeded {
		t.Fatalf("Revert: %+v %v", done, err)
	}
	if left := jobs(t, e); len(left) != 0 {
		t.Errorf("%d Jobs left after the rollback", len(left))
	}
	if got := secrets(t, e); len(got) != 1 || got[0] != "license" {
		t.Errorf("Secrets after the rollback: %v, want only the operator's license", got)
	}
}

// A Secret secretEnv names that does not exist fails the step by name,
// before any Job is created.
func TestDistributeNamesAMissingSecret(t *testing.T) {
	e := newEnv(t)
	s := spec(e.NS, "example.com/ec/local-artifact-mirror:2.17.1")
	s.SecretEnv[0].Secret = "licence"
	res, err := executor(t, e, s, 1).Run(context.Background())
	if err != nil || res.Status != step.Failed || !strings.Contains(res.Message, "secretEnv[0] (LOCAL_ARTIFACT_MIRROR_LICENSE_ID): Secret "+e.NS+"/licence does not exist") {
		t.Fatalf("result %+v, %v", res, err)
	}
	if n := len(jobs(t, e)); n != 0 {
		t.Errorf("%d Jobs created without their Secret", n)
	}
}

// A new attempt does not take an earlier attempt's Jobs for its own: it
// replaces them, and its Jobs carry its own label.
func TestDistributeNewAttemptReplacesEarlierJobs(t *testing.T) {
	e := newEnv(t)
	s := spec(e.NS, "example.com/ec/local-artifact-mirror:2.17.1")
	if _, err := executor(t, e, s, 1).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := jobs(t, e)
	res := drive(t, executor(t, e, s, 2))
	if res.Status != step.Succeeded {
		t.Fatalf("attempt 2: %+v", res)
	}
	for _, j := range first {
		got, err := e.Clientset.BatchV1().Jobs(e.NS).Get(context.Background(), j.Name, metav1.GetOptions{})
		if err == nil && got.UID == j.UID && got.DeletionTimestamp == nil {
			t.Errorf("attempt 1's Job %s is still there", j.Name)
		}
	}
}

// A Job of a node's name that is not Upshift's (embedded-cluster's own
// copy) is never replaced: the step fails naming it.
func TestDistributeLeavesOthersJobs(t *testing.T) {
	e := newEnv(t)
	theirs := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: distribute.JobName("node-1"), Namespace: e.NS, Labels: map[string]string{"app.kubernetes.io/component": "upgrader"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, NodeName: "node-1",
			Containers: []corev1.Container{{Name: "c", Image: "example.com/theirs:1"}}}}},
	}
	created, err := e.Clientset.BatchV1().Jobs(e.NS).Create(context.Background(), theirs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ex := executor(t, e, spec(e.NS, "example.com/ec/local-artifact-mirror:2.17.1"), 1)
	res, err := ex.Run(context.Background())
	if err != nil || res.Status != step.Failed || !strings.Contains(res.Message, "Job "+e.NS+"/copy-artifacts-node-1 exists and is not Upshift's") {
		t.Fatalf("result %+v, %v", res, err)
	}
	if j, err := e.Clientset.BatchV1().Jobs(e.NS).Get(context.Background(), theirs.Name, metav1.GetOptions{}); err != nil || j.UID != created.UID {
		t.Error("their Job was replaced")
	}
}

// A node name too long for copy-artifacts-<node> is shortened with a hash
// into a valid, distinct Job name, never one ending in a dot.
func TestDistributeJobNames(t *testing.T) {
	long := "ip-10-0-1-23.ec2-abcdefghijklmnopqrs.compute.internal"
	a, b := distribute.JobName(long), distribute.JobName(long+"x")
	for _, n := range []string{a, b} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 || len(n) > 63 {
			t.Errorf("Job name %q: %v", n, errs)
		}
	}
	if a == b {
		t.Errorf("two nodes share the Job name %q", a)
	}
}
