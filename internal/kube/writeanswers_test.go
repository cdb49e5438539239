package kube

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// A gate on an object its caller wrote through the Applier, given the
// Answers that hold the write, fences on that write instead of listing
// (it sends no list of its own): on a cache whose events arrive late it
// still never judges the version before the write. Once the caller writes
// otherwise and stops handing the Answers out, a write the Applier did
// not make is fenced by a list again: the gate does not take the
// Applier's older write, fully rolled out in the cache, for the object
// now.
func TestGateFencesOnTheCallersWriteAnswers(t *testing.T) {
	t.Parallel()
	e, ctx, c, _ := laggingEnv(t)
	lists := &deploymentLists{}
	ans := NewAnswers()
	cached := countingWaiter(t, e, lists).WithCache(c)
	w := cached.WithAnswers(ans)
	a := e.a.WithCache(c).WithAnswers(ans)
	v1, err := a.Apply(ctx, webDeployment(t, e.ns, "example.com/web:1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WaitWritten(ctx, v1, time.Minute); err != nil {
		t.Fatalf("wait for the first rollout: %v", err)
	}
	v2, err := a.Apply(ctx, webDeployment(t, e.ns, "example.com/web:2"))
	if err != nil {
		t.Fatal(err)
	}
	if ans.of(deploymentsGVR, e.ns, "web") == nil {
		t.Fatalf("the caller's write of web is not remembered")
	}
	lists.n.Store(0)
	if _, err := w.WaitCurrent(ctx, RefOf(v2), time.Minute); err != nil {
		t.Fatalf("the gate after the second write: %v", err)
	}
	rolledOut(t, e, v2.GetGeneration())
	if n := lists.n.Load(); n != 0 {
		t.Errorf("the gate after the Applier's write sent %d list(s) of web: want it fenced on the write's answer", n)
	}

	w = cached.WithAnswers(nil) // the caller writes otherwise: its gates list
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = "example.com/web:3"
	d, err = e.cs.AppsV1().Deployments(e.ns).Update(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lists.n.Store(0)
	if _, err := w.WaitCurrent(ctx, RefOf(v2), time.Minute); err != nil {
		t.Fatalf("the gate after another writer's write: %v", err)
	}
	rolledOut(t, e, d.Generation)
	if lists.n.Load() == 0 {
		t.Errorf("the gate after another writer's write sent no list of web: want it fenced on one")
	}
}

// deploymentLists counts the lists of Deployments a client sends (not
// its watches).
type deploymentLists struct{ n atomic.Int32 }

func (l *deploymentLists) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/deployments") && req.URL.Query().Get("watch") != "true" {
			l.n.Add(1)
		}
		return rt.RoundTrip(req)
	})
}

// countingWaiter is a Waiter on the test's cluster whose own requests
// lists counts.
func countingWaiter(t *testing.T, e *applyEnv, lists *deploymentLists) *Waiter {
	t.Helper()
	cfg := rest.CopyConfig(e.cfg)
	cfg.Wrap(lists.wrap)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return NewWaiter(dyn, newMapper(t, cfg))
}

var deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")

// rolledOut fails the test unless web's rollout of generation is done.
func rolledOut(t *testing.T, e *applyEnv, generation int64) {
	t.Helper()
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ObservedGeneration < generation || d.Status.UpdatedReplicas != 2 || d.Status.AvailableReplicas != 2 {
		t.Errorf("the gate returned before generation %d was rolled out: observed %d, %d updated, %d available",
			generation, d.Status.ObservedGeneration, d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
	}
}

// Answers to side-by-side writes of one object may come back in another
// order than the server stored them: the newer version stays the fence.
func TestAnswersKeepTheNewerVersion(t *testing.T) {
	ans := NewAnswers()
	answer := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace("shop")
		u.SetName("web")
		u.SetUID("uid-1")
		u.SetResourceVersion(rv)
		return u
	}
	ans.record(deploymentsGVR, answer("101"))
	ans.record(deploymentsGVR, answer("100"))
	if got := ans.of(deploymentsGVR, "shop", "web"); got == nil || got.GetResourceVersion() != "101" {
		t.Errorf("the answer is %v, want version 101", got)
	}
	ans.record(deploymentsGVR, answer("102"))
	if got := ans.of(deploymentsGVR, "shop", "web"); got == nil || got.GetResourceVersion() != "102" {
		t.Errorf("the answer is %v, want version 102", got)
	}
}
