package local

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// slowBudget answers evictions as a PodDisruptionBudget does that lets a
// pod go only gap after the previous one left: the drain's progress is
// pure logic over these answers, so a fake clientset stands in for the
// API server (the real one's budget controller is tested in
// local_test.go, and lags by seconds on a busy machine).
type slowBudget struct {
	mu       sync.Mutex
	gap      time.Duration
	last     time.Time
	never    string // a pod the budget never lets go
	evicted  []string
	refusals int
}

func (b *slowBudget) react(cs *fake.Clientset) k8stesting.ReactionFunc {
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := action.(k8stesting.CreateAction).GetObject().(interface{ GetName() string })
		name := ev.GetName()
		b.mu.Lock()
		defer b.mu.Unlock()
		if name == b.never || time.Since(b.last) < b.gap {
			b.refusals++
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		}
		b.last = time.Now()
		b.evicted = append(b.evicted, name)
		return true, nil, cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), action.GetNamespace(), name)
	}
}

func drainFixture(b *slowBudget) *fake.Clientset {
	objs := []runtime.Object{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-2"}}}
	for _, name := range []string{"a", "b", "c"} {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "app"}, Spec: corev1.PodSpec{NodeName: "node-2"}})
	}
	cs := fake.NewClientset(objs...)
	cs.PrependReactor("create", "pods", b.react(cs))
	return cs
}

// A drain that keeps going outlasts DrainTimeout: the timeout bounds the
// time without a pod leaving the node, not the whole drain. The budget
// lets a pod go every second; the drain takes three, past its 2.5s.
func TestDrainThatKeepsGoingOutlastsDrainTimeout(t *testing.T) {
	b := &slowBudget{gap: time.Second, last: time.Now()}
	cs := drainFixture(b)
	p := &Plugin{cfg: Config{DrainTimeout: 2500 * time.Millisecond, Poll: 20 * time.Millisecond}}
	began := time.Now()
	if err := p.drain(context.Background(), cs, "node-2"); err != nil {
		t.Fatalf("a drain where a pod left every second failed after %s: %v", time.Since(began).Round(time.Millisecond), err)
	}
	if took := time.Since(began); took < 2500*time.Millisecond || len(b.evicted) != 3 || b.refusals == 0 {
		t.Errorf("the drain took %s, evicted %v after %d refusals: want all three past the 2.5s timeout, refused between", took, b.evicted, b.refusals)
	}
	if n, _ := cs.CoreV1().Nodes().Get(context.Background(), "node-2", metav1.GetOptions{}); !n.Spec.Unschedulable {
		t.Error("the drained node is not cordoned")
	}
}

// A drain where no pod leaves for DrainTimeout fails, naming the pod the
// budget holds, even after others left.
func TestDrainThatStallsFails(t *testing.T) {
	b := &slowBudget{never: "c"}
	cs := drainFixture(b)
	p := &Plugin{cfg: Config{DrainTimeout: 500 * time.Millisecond, Poll: 20 * time.Millisecond}}
	err := p.drain(context.Background(), cs, "node-2")
	if err == nil || !strings.Contains(err.Error(), "drain of node node-2 did not finish within 500ms: evict pod app/c:") || !strings.Contains(err.Error(), "disruption budget") {
		t.Fatalf("a drain held by a budget: %v; want it to fail naming pod c and the budget", err)
	}
	if len(b.evicted) != 2 {
		t.Errorf("evicted %v; want a and b", b.evicted)
	}
}
