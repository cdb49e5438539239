package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/internal/kube"
)

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
