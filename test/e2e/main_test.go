// Package e2e holds the foundation's end-to-end tests: each one drives the
// real local control plane (internal/localcluster, one per test run) and
// asserts what a user of Upshift can observe — rollouts judged by the
// readiness Waiter, the fake kubelet's crash and failure rules, CRDs
// applied server-side, nodes going NotReady, kubectl against the cluster.
//
// Tests that change cluster-wide state (a node's readiness) or count nodes
// (the DaemonSet test) do not call t.Parallel: Go runs every sequential
// top-level test before it releases the parallel ones, so they never
// overlap with the others.
package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	// testTimeout bounds each test as a whole.
	testTimeout = 90 * time.Second
	// waitTimeout bounds one wait for an object to settle.
	waitTimeout = 60 * time.Second
	// fieldManager is this suite's server-side apply manager.
	fieldManager = "upshift-e2e"
)

// env is what a test needs to talk to the package's cluster.
type env struct {
	c   *localcluster.Cluster
	cs  kubernetes.Interface
	dyn dynamic.Interface
	w   *kube.Waiter
	ctx context.Context
	ns  string // the test's own namespace; "" if it has none
}

// newEnv connects to the cluster. With namespace set it creates a
// namespace for the test alone, deleted (without waiting) when it ends.
func newEnv(t *testing.T, namespace bool) *env {
	t.Helper()
	c := testenv.Cluster(t)
	cfg := c.RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("typed client: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	w, err := kube.NewWaiterForConfig(cfg)
	if err != nil {
		t.Fatalf("waiter: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	e := &env{c: c, cs: cs, dyn: dyn, w: w, ctx: ctx}
	if namespace {
		e.ns = createNamespace(t, ctx, cs)
	}
	return e
}

// createNamespace creates "e2e-<test name>-xxxxx", deleted after the test.
func createNamespace(t *testing.T, ctx context.Context, cs kubernetes.Interface) string {
	t.Helper()
	return testenv.Namespace(t, ctx, cs, "e2e")
}

// eventually polls cond every 100ms until it returns true, an error, or
// timeout passes; the last reason cond gave is reported on failure.
func eventually(t *testing.T, ctx context.Context, timeout time.Duration, what string, cond func() (ok bool, reason string, err error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	reason := "never checked"
	for {
		ok, why, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		reason = why
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %s: %s", what, timeout, reason)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v (last: %s)", what, ctx.Err(), reason)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func ptr[T any](v T) *T { return &v }

// podNames lists pod names for messages.
func podNames(pods []corev1.Pod) string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return fmt.Sprint(names)
}
