package kube

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

func webDeployment(t *testing.T, ns, image string) *unstructured.Unstructured {
	return mustObject(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: %q}]}
`, ns, image))
}

// TestCachedWaitsShareInformersAndJudgeTheWrite: a step's wait and the
// gate after it read one set of informers, and a wait that follows a write
// never judges the version before it, although the shared cache held that
// version fully rolled out when the write was made.
func TestCachedWaitsShareInformersAndJudgeTheWrite(t *testing.T) {
	t.Parallel()
	// The cache's watch events arrive late, as on a busy API server: a
	// wait that judged what the cache held when the write was made would
	// see the previous version, fully rolled out.
	e, ctx, c, w := laggingEnv(t)

	applied, err := e.a.Apply(ctx, webDeployment(t, e.ns, "example.com/web:1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WaitWritten(ctx, applied, time.Minute); err != nil {
		t.Fatalf("wait for the first rollout: %v", err)
	}
	ref := RefOf(applied)
	if _, err := w.WaitCurrent(ctx, ref, time.Minute); err != nil {
		t.Fatalf("the gate after it: %v", err)
	}
	c.mu.Lock()
	informers := len(c.shared)
	c.mu.Unlock()
	if informers != 3 {
		t.Errorf("two waits on one Deployment started %d shared informers, want 3 (deployments, pods, replicasets in %s)", informers, e.ns)
	}

	next, err := e.a.Apply(ctx, webDeployment(t, e.ns, "example.com/web:2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WaitWritten(ctx, next, time.Minute); err != nil {
		t.Fatalf("wait for the second rollout: %v", err)
	}
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ObservedGeneration < next.GetGeneration() || d.Status.UpdatedReplicas != 2 || d.Status.AvailableReplicas != 2 {
		t.Errorf("the wait returned before the second rollout was done: generation %d observed %d, %d updated, %d available",
			next.GetGeneration(), d.Status.ObservedGeneration, d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
	}
}

// TestCachedSelectorWaitCountsWhatTheListShowed: a selector wait on a
// lagging shared cache counts the object created just before it started
// (listed, not yet cached: the wait asks the API server and waits for the
// events) and not the one deleted just before (cached, not listed: the wait
// waits for the deletion to arrive).
func TestCachedSelectorWaitCountsWhatTheListShowed(t *testing.T) {
	t.Parallel()
	e, ctx, _, w := laggingEnv(t)
	labelled := func(name string) *unstructured.Unstructured {
		u := configMap(t, e.ns, name, "v")
		u.SetLabels(map[string]string{"part-of": "demo"})
		return u
	}
	sel := SelectorRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: e.ns, Selector: "part-of=demo"}
	for _, n := range []string{"kept", "doomed"} {
		if _, err := e.a.Apply(ctx, labelled(n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.WaitSelectorCurrent(ctx, sel, time.Minute); err != nil {
		t.Fatalf("first wait: %v", err)
	}

	// The cache holds kept and doomed; doomed goes, two fresh come, and the
	// cache hears of neither for 300 ms.
	if err := e.cs.CoreV1().ConfigMaps(e.ns).Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"fresh-1", "fresh-2"} {
		if _, err := e.a.Apply(ctx, labelled(n)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := w.WaitSelectorCurrent(ctx, sel, time.Minute)
	if err != nil {
		t.Fatalf("second wait: %v", err)
	}
	if !strings.Contains(h.Message, "all 3 Current") {
		t.Errorf("second wait judged %q, want kept, fresh-1 and fresh-2 (all 3 Current)", h.Message)
	}
}

// laggingEnv is a test's namespace and a cached Waiter whose shared
// informers hear every event 300 ms late; both end with the test.
func laggingEnv(t *testing.T) (*applyEnv, context.Context, *Cache, *Waiter) {
	t.Helper()
	e := newApplyEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	dyn, err := dynamic.NewForConfig(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(lagging{dyn, 300 * time.Millisecond})
	t.Cleanup(c.Close)
	return e, ctx, c, NewWaiter(dyn, newMapper(t, e.cfg)).WithCache(c)
}

// lagging delays every watch event of a dynamic client by lag.
type lagging struct {
	dynamic.Interface
	lag time.Duration
}

func (l lagging) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return laggingResource{l.Interface.Resource(gvr), l.lag}
}

type laggingResource struct {
	dynamic.NamespaceableResourceInterface
	lag time.Duration
}

func (r laggingResource) Namespace(ns string) dynamic.ResourceInterface {
	return laggingNamespaced{r.NamespaceableResourceInterface.Namespace(ns), r.lag}
}

type laggingNamespaced struct {
	dynamic.ResourceInterface
	lag time.Duration
}

func (r laggingNamespaced) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := r.ResourceInterface.Watch(ctx, o)
	if err != nil {
		return nil, err
	}
	lw := &laggingWatch{Interface: w, out: make(chan watch.Event), done: make(chan struct{})}
	go func() {
		defer close(lw.out)
		for e := range w.ResultChan() {
			select {
			case <-time.After(r.lag):
			case <-lw.done:
				return
			}
			select {
			case lw.out <- e:
			case <-lw.done:
				return
			}
		}
	}()
	return lw, nil
}

type laggingWatch struct {
	watch.Interface
	out  chan watch.Event
	done chan struct{}
	once sync.Once
}

func (w *laggingWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *laggingWatch) Stop() {
	w.once.Do(func() { close(w.done) })
	w.Interface.Stop()
}
