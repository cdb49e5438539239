package podsrunning_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/gates"
	"github.com/upshift-dev/upshift/internal/gates/podsrunning"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// createPod creates a bare pod labelled app=<app>. A nodeSelector of
// "nowhere" leaves it Pending: no node has that label.
func createPod(t *testing.T, e *clienttest.Env, name, app, image string, nowhere bool) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.NS, Name: name, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
	if nowhere {
		p.Spec.NodeSelector = map[string]string{"upshift.dev/test-node": "nowhere"}
	}
	p, err := e.Clientset.CoreV1().Pods(e.NS).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	return p
}

// waitReady waits until the fake kubelet reports the pod Ready.
func waitReady(t *testing.T, e *clienttest.Env, name string) {
	t.Helper()
	ref := kube.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: e.NS, Name: name}
	if _, err := e.Waiter.WaitCurrent(context.Background(), ref, 20*time.Second); err != nil {
		t.Fatalf("pod %s not Ready: %v", name, err)
	}
}

// setRestarts plays the kubelet: it writes the app container's restart
// count, as a kubelet does after the container crashed and came back.
// kwok leaves the status of a Ready pod alone, so the count stays.
func setRestarts(ctx context.Context, cs kubernetes.Interface, ns, name string, n int32) error {
	for {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.ContainerStatuses[0].RestartCount = n
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

// run builds the gate as the engine does and runs it.
func run(e *clienttest.Env, spec v1alpha1.PodsRunningGate, timeout time.Duration) (step.Result, time.Duration, error) {
	g, err := gates.New(v1alpha1.Gate{PodsRunning: &spec}, timeout, e.Set, nil)
	if err != nil {
		return step.Result{}, 0, err
	}
	start := time.Now()
	res, err := g.Check(context.Background())
	return res, time.Since(start), err
}

func check(t *testing.T, e *clienttest.Env, spec v1alpha1.PodsRunningGate, timeout time.Duration) (step.Result, time.Duration) {
	t.Helper()
	res, took, err := run(e, spec, timeout)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	t.Logf("%s: %s in %s", res.Status, res.Message, took.Round(time.Millisecond))
	return res, took
}

func want(t *testing.T, res step.Result, outcome step.Status, message string) {
	t.Helper()
	if res.Status != outcome || res.Message != message {
		t.Errorf("Check = %s %q\nwant     %s %q", res.Status, res.Message, outcome, message)
	}
}

// The gate waits for pods that were just created (they turn Ready about
// 200ms later) and passes once all are Running and Ready.
func TestPassesWhenPodsTurnReady(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createPod(t, e, "web-a", "web", "registry.example/web:v1", false)
	createPod(t, e, "web-b", "web", "registry.example/web:v1", false)
	res, _ := check(t, e, v1alpha1.PodsRunningGate{Namespace: e.NS, Selector: "app=web"}, time.Minute)
	want(t, res, step.Succeeded, "2 pods Running and Ready")
}

// A crash-looping container fails the gate at once, naming the pod and the
// container, even with a long timeout and restarts allowed.
func TestCrashLoopFailsFast(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createPod(t, e, "web-a", "web", "registry.example/web:v1", false)
	createPod(t, e, "web-b", "web", "registry.example/web:v2-broken", false)
	three := int32(3)
	res, took := check(t, e, v1alpha1.PodsRunningGate{Namespace: e.NS, Selector: "app=web", MaxRestarts: &three}, 2*time.Minute)
	prefix := fmt.Sprintf("pod %s/web-b container app: CrashLoopBackOff (restarts: ", e.NS)
	if res.Status != step.Failed || !strings.HasPrefix(res.Message, prefix) || !strings.HasSuffix(res.Message, "), last exit code 1 (Error)") {
		t.Errorf("Check = %s %q, want Failed %q…", res.Status, res.Message, prefix)
	}
	if took > 15*time.Second {
		t.Errorf("Check took %s, want a failure within 15s", took)
	}
}

func TestNothingMatchesFails(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createPod(t, e, "web-a", "web", "registry.example/web:v1", false)
	res, took := check(t, e, v1alpha1.PodsRunningGate{Namespace: e.NS, Selector: "app=wbe"}, time.Minute)
	want(t, res, step.Failed, fmt.Sprintf(`no pods match "app=wbe" in %s`, e.NS))
	if took > 10*time.Second {
		t.Errorf("Check took %s, want a failure on the first list", took)
	}
}

// A pod that stays Pending is named, with the scheduler's reason, when
// the time runs out.
func TestTimeoutNamesThePendingPod(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createPod(t, e, "web-a", "web", "registry.example/web:v1", false)
	createPod(t, e, "web-b", "web", "registry.example/web:v1", true)
	res, _ := check(t, e, v1alpha1.PodsRunningGate{Namespace: e.NS, Selector: "app=web"}, 3*time.Second)
	re := regexp.MustCompile(`^timed out after 3s: 1 of 2 pods not Running and Ready: pod ` + e.NS + `/web-b Pending \(Unschedulable: 0/3 nodes are available: .*node\(s\) didn't match Pod's node affinity/selector`)
	if res.Status != step.Failed || !re.MatchString(res.Message) {
		t.Errorf("Check = %s %q, want Failed matching %s", res.Status, res.Message, re)
	}
}

// Restarts count from when the gate starts. The scenario: web-a is
// Running and Ready and had crashed 5 times before the gate; web-b is
// Pending on no node, so the gate keeps waiting. While it waits, web-a's
// container restarts again and again. With maxRestarts 2, the gate fails
// on the third restart since it started: had it counted the 5 earlier
// ones, it would fail at once with a larger count.
//
// The test plays the kubelet and writes restartCount itself: kwok's
// `broken` image cannot serve here, since its container is in
// CrashLoopBackOff from its first status on, which fails the gate at once
// whatever maxRestarts says (TestCrashLoopFailsFast).
func TestRestartsWhileWaitingFail(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createPod(t, e, "web-a", "web", "registry.example/web:v1", false)
	createPod(t, e, "web-b", "web", "registry.example/web:v1", true)
	waitReady(t, e, "web-a")
	ctx := context.Background()
	if err := setRestarts(ctx, e.Clientset, e.NS, "web-a", 5); err != nil {
		t.Fatal(err)
	}

	type outcome struct {
		res step.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		two := int32(2)
		res, _, err := run(e, v1alpha1.PodsRunningGate{Namespace: e.NS, Selector: "app=web", MaxRestarts: &two}, 20*time.Second)
		done <- outcome{res, err}
	}()
	restarts := int32(5)
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case o := <-done:
			if o.err != nil {
				t.Fatalf("Check: %v", o.err)
			}
			t.Logf("%s: %s (restartCount %d)", o.res.Status, o.res.Message, restarts)
			want(t, o.res, step.Failed, fmt.Sprintf("pod %s/web-a container app restarted 3 times since the gate started (maxRestarts: 2)", e.NS))
			return
		case <-tick.C:
			restarts++
			if err := setRestarts(ctx, e.Clientset, e.NS, "web-a", restarts); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Restarts from before the gate do not fail it, even with the default
// maxRestarts of 0.
func TestEarlierRestartsDoNotCount(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createPod(t, e, "web-a", "web", "registry.example/web:v1", false)
	waitReady(t, e, "web-a")
	if err := setRestarts(context.Background(), e.Clientset, e.NS, "web-a", 5); err != nil {
		t.Fatal(err)
	}
	res, _ := check(t, e, v1alpha1.PodsRunningGate{Namespace: e.NS, Selector: "app=web"}, time.Minute)
	want(t, res, step.Succeeded, "1 pod Running and Ready")
}

// A user who may not list pods gets an error at once, not a timeout: no
// wait cures missing RBAC.
func TestForbiddenIsAnError(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	cfg, err := testenv.Cluster(t).UserRESTConfig("nobody")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := podsrunning.New(v1alpha1.PodsRunningGate{Namespace: e.NS, Selector: "app=web"}, time.Minute, cs)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := g.Check(context.Background())
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "watch pods in "+e.NS) {
		t.Errorf("Check = %+v, %v; want a Forbidden error naming the pods", res, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Check took %s", took)
	}
}

func TestNewRejectsBadSpecs(t *testing.T) {
	minus := int32(-1)
	for _, spec := range []v1alpha1.PodsRunningGate{
		{Selector: "app=web"},
		{Namespace: "demo"},
		{Namespace: "demo", Selector: "app in (web"},
		{Namespace: "demo", Selector: "app=web", MaxRestarts: &minus},
	} {
		if _, err := podsrunning.New(spec, time.Minute, nil); !errors.Is(err, podsrunning.ErrInvalidSpec) {
			t.Errorf("New(%+v) = %v, want ErrInvalidSpec", spec, err)
		}
	}
}
