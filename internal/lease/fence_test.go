package lease

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// writeStream writes a ConfigMap over and over with a context of its own,
// as Helm's kube client does (it goes on after our context ended), until
// stop closes. sentSince counts the successful create-and-delete pairs
// whose delete, the pair's last request, was sent at or after a time: a
// fence can refuse what is sent after it closes, not unsend a request
// already on the wire, whose answer may come back after the loss is seen.
// refusals returns the errors it met.
func writeStream(cs kubernetes.Interface, ns string, stop <-chan struct{}) (sentSince func(time.Time) int, refusals func() []error, wait func()) {
	var mu sync.Mutex
	var sent []time.Time // when each successful pair sent its delete
	var errs []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stream", Namespace: ns}, Data: map[string]string{}}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cm.Data["i"] = strconv.Itoa(i)
			var start time.Time
			_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
			if err == nil {
				start = time.Now() // the pair's last request: a fence that let it through after the loss is caught
				err = cs.CoreV1().ConfigMaps(ns).Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
			}
			mu.Lock()
			if err == nil {
				sent = append(sent, start)
			} else {
				errs = append(errs, err)
			}
			mu.Unlock()
			if err != nil {
				time.Sleep(10 * time.Millisecond) // a refused writer retries, as Helm's wait and rollback do
			}
		}
	}()
	sentSince = func(from time.Time) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, at := range sent {
			if !at.Before(from) {
				n++
			}
		}
		return n
	}
	refusals = func() []error { mu.Lock(); defer mu.Unlock(); return append([]error(nil), errs...) }
	return sentSince, refusals, func() { <-done }
}

// End to end on the API server: a process holds the lease and writes
// through a guarded client with a context that never ends; another holder
// takes the lease; from the moment this process sees the loss no write of
// its user reaches the API server (its audit log).
func TestFenceStopsWritesWhenTheLeaseIsTaken(t *testing.T) {
	t.Parallel()
	f := setup(t)
	user := "fenced-writer-" + f.ns
	grant(t, f, "writer", user, holdLease, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update", "patch", "delete"}})
	rc, leaseClient := userClient(t, f, user)
	fence := NewFence()
	guarded, err := kubernetes.NewForConfig(fence.Guard(rc))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Acquire(f.ctx, leaseClient, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	fence.Open(h)

	stop := make(chan struct{})
	sentSince, refusals, wait := writeStream(guarded, f.ns, stop)
	defer func() { close(stop); wait() }()
	for start := time.Now(); sentSince(start) < 20; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the writer made %d writes in 10s under the lease; errors: %v", sentSince(start), refusals())
		}
	}

	takeOver(t, f, Identity{User: "mallory", Host: "elsewhere", PID: 7, Run: "other"})
	select {
	case <-h.Lost():
	case <-time.After(testDuration):
		t.Fatal("Lost not closed after the lease was taken over")
	}
	// Every write begun after this instant was begun after the fence closed.
	lost := time.Now()
	time.Sleep(time.Second) // the writer keeps trying
	if n := sentSince(lost); n != 0 {
		t.Errorf("%d write(s) begun after the lease was lost succeeded", n)
	}
	before := sentSince(time.Time{})
	if errs := refusals(); len(errs) == 0 {
		t.Error("the writer met no refusal after the loss")
	} else if last := errs[len(errs)-1]; !errors.Is(last, ErrFenced) || !errors.Is(last, ErrLost) {
		t.Errorf("write after the loss failed with %v, want ErrFenced wrapping ErrLost", last)
	}

	// The audit log: the writes of the user under the lease are there, and
	// none sent after the loss. The writer is sequential, so at most one
	// write is on the wire when the fence closes: it is cut off but may
	// still be received, and on a loaded machine the API server may log it
	// well after the loss was seen. Any second late write was sent through
	// a closed fence.
	var ours, late []localcluster.AuditEvent
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		events, err := f.c.ReadAudit()
		if err != nil {
			t.Fatal(err)
		}
		ours, late = nil, nil
		for _, e := range localcluster.ByUser(events, user) {
			if !e.IsWrite() || e.ObjectRef == nil || e.ObjectRef.Resource != "configmaps" {
				continue
			}
			ours = append(ours, e)
			if e.RequestReceivedTimestamp.After(lost) {
				late = append(late, e)
			}
		}
		if len(ours) >= 2*before || time.Now().After(deadline) {
			break
		}
	}
	if len(ours) < 2*before {
		t.Fatalf("the audit log shows %d ConfigMap writes of %s, want the %d made under the lease", len(ours), user, 2*before)
	}
	if len(late) > 1 {
		e := late[1]
		t.Errorf("audit: %d write(s) by %s received after the lease was lost, more than the one on the wire; the second %s %s %s after", len(late), user,
			e.Verb, e.Object(), e.RequestReceivedTimestamp.Sub(lost))
	}
	var last time.Time
	for _, e := range ours {
		if e.RequestReceivedTimestamp.After(last) {
			last = e.RequestReceivedTimestamp
		}
	}
	t.Logf("%d ConfigMap writes under the lease; the last received %s after the loss was seen", len(ours), last.Sub(lost))
}
