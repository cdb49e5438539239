package e2e

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

func podTemplate(labels map[string]string, image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: image}},
		},
	}
}

func deployment(name string, replicas int32, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, image),
		},
	}
}

// livePods lists the pods matching selector that are not being deleted.
func (e *env) livePods(t *testing.T, selector string) []corev1.Pod {
	t.Helper()
	list, err := e.cs.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list pods %q: %v", selector, err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// checkPodsRunImage asserts that there are want live pods, each Running and
// Ready, whose containers report image in their status (what the fake
// kubelet "runs"), not only in their spec.
func checkPodsRunImage(t *testing.T, pods []corev1.Pod, want int, image string) {
	t.Helper()
	if len(pods) != want {
		t.Fatalf("got %d live pods %s, want %d", len(pods), podNames(pods), want)
	}
	for _, p := range pods {
		if p.Spec.Containers[0].Image != image {
			t.Errorf("pod %s: spec image %q, want %q", p.Name, p.Spec.Containers[0].Image, image)
		}
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: phase %s, want Running", p.Name, p.Status.Phase)
		}
		if len(p.Status.ContainerStatuses) != 1 {
			t.Errorf("pod %s: %d container statuses, want 1", p.Name, len(p.Status.ContainerStatuses))
			continue
		}
		cs := p.Status.ContainerStatuses[0]
		if cs.Image != image {
			t.Errorf("pod %s: status image %q, want %q", p.Name, cs.Image, image)
		}
		if !cs.Ready {
			t.Errorf("pod %s: container %s not ready", p.Name, cs.Name)
		}
	}
}

// TestDeploymentRolloutAndUpdate: a 3-replica Deployment is judged Current
// once its pods run the spec image; a new image (a new revision) is judged
// Current only once every pod runs it.
func TestDeploymentRolloutAndUpdate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	const v1, v2 = "example.com/web:1.0", "example.com/web:1.1"
	deps := e.cs.AppsV1().Deployments(e.ns)
	if _, err := deps.Create(e.ctx, deployment("web", 3, v1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	ref := kube.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.ns, Name: "web"}
	start := time.Now()
	h, err := e.w.WaitCurrent(e.ctx, ref, waitTimeout)
	if err != nil {
		t.Fatalf("first rollout: %v", err)
	}
	t.Logf("first rollout Current after %s: %s", time.Since(start).Round(time.Millisecond), h)
	if !h.Current() || !strings.Contains(h.Message, "deployment "+e.ns+"/web") {
		t.Errorf("health = %s, want Current naming the deployment", h)
	}
	d, err := deps.Get(e.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ReadyReplicas != 3 || d.Status.UpdatedReplicas != 3 || d.Status.AvailableReplicas != 3 {
		t.Errorf("status ready/updated/available = %d/%d/%d, want 3/3/3",
			d.Status.ReadyReplicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
	}
	checkPodsRunImage(t, e.livePods(t, "app=web"), 3, v1)

	// A new revision.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deps.Get(e.ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = v2
		_, err = deps.Update(e.ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update image: %v", err)
	}
	start = time.Now()
	h, err = e.w.WaitCurrent(e.ctx, ref, waitTimeout)
	if err != nil {
		t.Fatalf("second rollout: %v", err)
	}
	t.Logf("second rollout Current after %s: %s", time.Since(start).Round(time.Millisecond), h)
	d, err = deps.Get(e.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != 3 || d.Status.AvailableReplicas != 3 {
		t.Errorf("after Current: observedGeneration %d (generation %d), updated %d, available %d; want the new revision fully rolled out",
			d.Status.ObservedGeneration, d.Generation, d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
	}
	if rev := d.Annotations["deployment.kubernetes.io/revision"]; rev != "2" {
		t.Errorf("deployment revision %q, want 2", rev)
	}
	// When the Waiter says Current, every pod that is not on its way out
	// already runs the new image.
	checkPodsRunImage(t, e.livePods(t, "app=web"), 3, v2)
	// And the old pods go away.
	eventually(t, e.ctx, 30*time.Second, "old pods deleted", func() (bool, string, error) {
		list, err := e.cs.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, "", err
		}
		return len(list.Items) == 3, fmt.Sprintf("%d pods", len(list.Items)), nil
	})
}

// waitNodesSchedulable waits until the cluster's 3 nodes are Ready and
// carry no taint: a node the node test made NotReady may keep its
// not-ready taint for a few seconds after it recovers.
func (e *env) waitNodesSchedulable(t *testing.T) {
	t.Helper()
	eventually(t, e.ctx, 30*time.Second, "3 schedulable Ready nodes", func() (bool, string, error) {
		nodes, err := e.cs.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		ok := 0
		var why []string
		for _, n := range nodes.Items {
			switch {
			case !localcluster.NodeIsReady(&n):
				why = append(why, n.Name+" not Ready")
			case len(n.Spec.Taints) > 0:
				why = append(why, fmt.Sprintf("%s tainted %v", n.Name, n.Spec.Taints))
			default:
				ok++
			}
		}
		return ok == 3 && len(nodes.Items) == 3, fmt.Sprintf("%d nodes, %d schedulable: %v", len(nodes.Items), ok, why), nil
	})
}

// TestDaemonSetReadyOnAllNodes: a DaemonSet is Current with one Ready pod
// on each of the 3 nodes. Not parallel: it counts nodes, which the node
// test takes away for a while.
func TestDaemonSetReadyOnAllNodes(t *testing.T) {
	e := newEnv(t, true)
	e.waitNodesSchedulable(t)
	const image = "example.com/agent:2.0"
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, image),
		},
	}
	if _, err := e.cs.AppsV1().DaemonSets(e.ns).Create(e.ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create daemonset: %v", err)
	}
	start := time.Now()
	h, err := e.w.WaitCurrent(e.ctx, kube.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: e.ns, Name: "agent"}, waitTimeout)
	if err != nil {
		t.Fatalf("wait daemonset: %v", err)
	}
	t.Logf("daemonset Current after %s: %s", time.Since(start).Round(time.Millisecond), h)
	got, err := e.cs.AppsV1().DaemonSets(e.ns).Get(e.ctx, "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.DesiredNumberScheduled != 3 || got.Status.NumberReady != 3 {
		t.Errorf("daemonset desired %d, ready %d; want 3 and 3", got.Status.DesiredNumberScheduled, got.Status.NumberReady)
	}
	pods := e.livePods(t, "app=agent")
	checkPodsRunImage(t, pods, 3, image)
	var nodes []string
	for _, p := range pods {
		nodes = append(nodes, p.Spec.NodeName)
	}
	sort.Strings(nodes)
	if want := []string{"node-0", "node-1", "node-2"}; fmt.Sprint(nodes) != fmt.Sprint(want) {
		t.Errorf("pods run on %v, want one on each of %v", nodes, want)
	}
}

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

// TestDeploymentCrashLoopFailsFast: a Deployment whose pod crash-loops is
// reported failing within 15 s, long before progressDeadlineSeconds (600 s
// by default), and the error names the pod and CrashLoopBackOff.
func TestDeploymentCrashLoopFailsFast(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	const bound = 15 * time.Second
	start := time.Now()
	d := deployment("web", 1, "example.com/web:1.0-broken")
	if _, err := e.cs.AppsV1().Deployments(e.ns).Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	h, err := e.w.WaitCurrent(e.ctx, kube.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.ns, Name: "web"}, 2*bound)
	elapsed := time.Since(start)
	if err == nil {
		t.Fatalf("wait: no error, health %s; want failing", h)
	}
	t.Logf("failing after %s: %v", elapsed.Round(time.Millisecond), err)
	if elapsed > bound {
		t.Errorf("failure reported after %s, want within %s", elapsed.Round(time.Millisecond), bound)
	}
	if !errors.Is(err, kube.ErrFailing) || errors.Is(err, kube.ErrTimeout) {
		t.Fatalf("error %q: want ErrFailing, not a timeout", err)
	}
	got, err2 := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, "web", metav1.GetOptions{})
	if err2 != nil {
		t.Fatal(err2)
	}
	if got.Spec.ProgressDeadlineSeconds == nil || *got.Spec.ProgressDeadlineSeconds != 600 {
		t.Errorf("progressDeadlineSeconds %v, want the default 600", got.Spec.ProgressDeadlineSeconds)
	}
	pods := e.livePods(t, "app=web")
	if len(pods) != 1 {
		t.Fatalf("got pods %s, want 1", podNames(pods))
	}
	p := pods[0]
	for _, want := range []string{"CrashLoopBackOff", e.ns + "/" + p.Name} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	// The pod keeps crashing: its restart count grows (kwok "restarts" a
	// broken container every second).
	t.Run("restartCount grows", func(t *testing.T) {
		restarts := func() int32 {
			t.Helper()
			p, err := e.cs.CoreV1().Pods(e.ns).Get(e.ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Status.ContainerStatuses) != 1 {
				t.Fatalf("pod %s: container statuses %+v", p.Name, p.Status.ContainerStatuses)
			}
			cs := p.Status.ContainerStatuses[0]
			if cs.Ready || cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
				t.Errorf("pod %s container state %+v ready=%t, want waiting in CrashLoopBackOff", p.Name, cs.State, cs.Ready)
			}
			return cs.RestartCount
		}
		first := restarts()
		time.Sleep(2500 * time.Millisecond)
		second := restarts()
		t.Logf("restartCount %d, then %d 2.5s later", first, second)
		if second <= first {
			t.Errorf("restartCount went from %d to %d in 2.5s, want it to grow", first, second)
		}
	})
}
