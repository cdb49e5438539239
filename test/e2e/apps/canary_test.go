package apps_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The seed's ManagedApplication, as an AppRollout, rolls its Deployment
// to v2.0.0: the migration Job first, then canary steps of 10 % and 50 %
// (each promoted by annotation rather than waiting its 300 s), then
// 100 %; the weights show in status and on the ReplicaSets.
func TestSeedManifestRollsWithMigrationAndCanary(t *testing.T) {
	t.Parallel()
	manifest := seedManifest(t)
	e := newEnv(t)
	e.grant("default")
	e.deployment("my-app", "registry.example.com/my-app:v1.0.0", 10)
	e.startController("ctl-canary")
	if out, err := e.kubectl(manifest, "apply", "-n", e.ns, "--server-side", "--field-manager", "operator", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply of the seed's manifest as an AppRollout: %v\n%s", err, out)
	}

	first := e.waitStep("my-app", 0, 10)
	job := e.job("my-app-migration-v2-0-0")
	if job.Labels["app"] != "my-app" || job.Labels["type"] != "migration" || !jobDone(job) {
		t.Errorf("migration Job labels %v, complete %t; want app=my-app, type=migration, complete", job.Labels, jobDone(job))
	}
	if c := e.getDeployment("my-app-canary"); !c.CreationTimestamp.After(job.CreationTimestamp.Time) && !c.CreationTimestamp.Equal(&job.CreationTimestamp) {
		t.Errorf("canary created at %s, before the migration Job (%s)", c.CreationTimestamp, job.CreationTimestamp)
	}
	e.wantReplicaSets(map[string]int32{"my-app:registry.example.com/my-app:v1.0.0": 9, "my-app-canary:registry.example.com/my-app:v2.0.0": 1})
	if first.Status.Backup == nil || first.Status.CurrentVersion != "v1.0.0" || first.Status.TargetVersion != "v2.0.0" {
		t.Errorf("status at the first step: %+v", first.Status)
	}

	e.annotate("my-app", v1alpha1.AnnotationPromote, "1")
	e.waitStep("my-app", 1, 50)
	e.wantReplicaSets(map[string]int32{"my-app:registry.example.com/my-app:v1.0.0": 5, "my-app-canary:registry.example.com/my-app:v2.0.0": 5})

	e.annotate("my-app", v1alpha1.AnnotationPromote, "2")
	done := e.waitFor("my-app", "Healthy", time.Minute, func(a *v1alpha1.AppRollout) bool {
		return meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionReady)
	})
	if done.Status.Phase != v1alpha1.AppHealthy || done.Status.CurrentVersion != "v2.0.0" {
		t.Errorf("done: %+v", done.Status)
	}
	d := e.getDeployment("my-app")
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "registry.example.com/my-app:v2.0.0" || *d.Spec.Replicas != 10 || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/health" {
		t.Errorf("deployment after promotion: image %s, replicas %d, readiness probe %+v", c.Image, *d.Spec.Replicas, c.ReadinessProbe)
	}
	e.wantReplicaSets(map[string]int32{"my-app:registry.example.com/my-app:v1.0.0": 0, "my-app:registry.example.com/my-app:v2.0.0": 10})
	if out, _ := e.kubectl("", "get", "-n", e.ns, "approllout", "my-app"); !strings.Contains(out, "v2.0.0") || !strings.Contains(out, "Healthy") {
		t.Errorf("kubectl get approllout:\n%s", out)
	}
}

// waitStep waits until the rollout holds canary step i at weight, its
// pods ready.
func (e *env) waitStep(name string, i, weight int32) *v1alpha1.AppRollout {
	e.t.Helper()
	return e.waitFor(name, fmt.Sprintf("holding canary step %d at %d%%", i, weight), time.Minute, func(a *v1alpha1.AppRollout) bool {
		st := a.Status
		return st.Phase == v1alpha1.AppDeploying && st.CanaryStep == i && st.CanaryWeight == weight && st.PauseStartedAt != nil
	})
}

func (e *env) job(name string) *batchv1.Job {
	e.t.Helper()
	j, err := e.cs.BatchV1().Jobs(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

func jobDone(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// wantReplicaSets checks the namespace's ReplicaSets, as
// "<deployment>:<image>" → replicas.
func (e *env) wantReplicaSets(want map[string]int32) {
	e.t.Helper()
	list, err := e.cs.AppsV1().ReplicaSets(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	got := map[string]int32{}
	for _, rs := range list.Items {
		owner := ""
		if len(rs.OwnerReferences) > 0 {
			owner = rs.OwnerReferences[0].Name
		}
		got[owner+":"+rs.Spec.Template.Spec.Containers[0].Image] = *rs.Spec.Replicas
	}
	var diffs []string
	for k, v := range want {
		if got[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s has %d replicas, want %d", k, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			diffs = append(diffs, fmt.Sprintf("%s has %d replicas, want none", k, v))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		e.t.Errorf("ReplicaSets: %s (all: %v)", strings.Join(diffs, "; "), got)
	}
}
