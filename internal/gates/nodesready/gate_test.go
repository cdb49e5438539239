package nodesready_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/gates"
	"github.com/upshift-dev/upshift/internal/gates/nodesready"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// kwok's reason for a node labelled upshift.dev/not-ready=true.
const notReady = "node-2 (Ready=False: KubeletNotReady: kubelet stopped posting ready status (upshift.dev/not-ready=true))"

// run builds the gate as the engine does and runs it.
func run(d *clients.Set, spec v1alpha1.NodesReadyGate, timeout time.Duration) (step.Result, time.Duration, error) {
	g, err := gates.New(v1alpha1.Gate{NodesReady: &spec}, timeout, d, nil)
	if err != nil {
		return step.Result{}, 0, err
	}
	start := time.Now()
	res, err := g.Check(context.Background())
	return res, time.Since(start), err
}

func check(t *testing.T, d *clients.Set, spec v1alpha1.NodesReadyGate, timeout time.Duration, outcome step.Status, message string) time.Duration {
	t.Helper()
	res, took, err := run(d, spec, timeout)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	t.Logf("%s: %s in %s", res.Status, res.Message, took.Round(time.Millisecond))
	if res.Status != outcome || res.Message != message {
		t.Errorf("Check = %s %q\nwant     %s %q", res.Status, res.Message, outcome, message)
	}
	return took
}

func ptr[T any](v T) *T { return &v }

// The package's cluster has three kwok nodes, node-0 to node-2. The tests
// run in order, never in parallel: one turns node-2 NotReady, and every
// test counts nodes.
func TestNodesReady(t *testing.T) {
	c := testenv.Cluster(t)
	d, err := clients.New(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("all three Ready", func(t *testing.T) {
		check(t, d, v1alpha1.NodesReadyGate{}, time.Minute, step.Succeeded, "3 of 3 nodes Ready")
		check(t, d, v1alpha1.NodesReadyGate{Selector: "type=kwok"}, time.Minute, step.Succeeded, `3 of 3 nodes matching "type=kwok" Ready`)
	})

	t.Run("a selector matching nothing fails at once", func(t *testing.T) {
		took := check(t, d, v1alpha1.NodesReadyGate{Selector: "pool=gpu"}, time.Minute, step.Failed, `no nodes match "pool=gpu"`)
		if took > 10*time.Second {
			t.Errorf("Check took %s, want a failure on the first list", took)
		}
	})

	t.Run("node-2 NotReady", func(t *testing.T) {
		ctx := context.Background()
		if err := c.SetNodeReady(ctx, "node-2", false); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := c.SetNodeReady(context.Background(), "node-2", true); err != nil {
				t.Errorf("restore node-2: %v", err)
			}
		})

		// Every node required: the gate waits, then names node-2.
		check(t, d, v1alpha1.NodesReadyGate{}, 3*time.Second, step.Failed, "timed out after 3s: 2 of 3 nodes Ready; NotReady: "+notReady)

		// Two of three are enough.
		check(t, d, v1alpha1.NodesReadyGate{MinReady: ptr[int32](2)}, time.Minute, step.Succeeded, "2 of 3 nodes Ready, at least 2 required; NotReady: "+notReady)

		// The gate passes as soon as node-2 recovers while it waits.
		recovered := make(chan error, 1)
		go func() {
			time.Sleep(time.Second)
			recovered <- c.SetNodeReady(ctx, "node-2", true)
		}()
		took := check(t, d, v1alpha1.NodesReadyGate{Selector: "kubernetes.io/hostname=node-2"}, 20*time.Second, step.Succeeded, `1 of 1 node matching "kubernetes.io/hostname=node-2" Ready`)
		if err := <-recovered; err != nil {
			t.Fatal(err)
		}
		if took < time.Second {
			t.Errorf("Check passed after %s, while node-2 was still NotReady", took)
		}
	})

	// A user who may not list nodes gets an error at once, not a timeout.
	t.Run("forbidden is an error", func(t *testing.T) {
		cfg, err := c.UserRESTConfig("nobody")
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		g, err := nodesready.New(v1alpha1.NodesReadyGate{}, time.Minute, cs)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := g.Check(context.Background())
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "watch nodes: ") {
			t.Errorf("Check = %+v, %v; want a Forbidden error naming the nodes", res, err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("Check took %s", took)
		}
	})
}

func TestNewRejectsBadSpecs(t *testing.T) {
	for _, spec := range []v1alpha1.NodesReadyGate{
		{MinReady: ptr[int32](0)},
		{Selector: "pool in (gpu"},
	} {
		if _, err := nodesready.New(spec, time.Minute, nil); !errors.Is(err, nodesready.ErrInvalidSpec) {
			t.Errorf("New(%+v) = %v, want ErrInvalidSpec", spec, err)
		}
	}
}
