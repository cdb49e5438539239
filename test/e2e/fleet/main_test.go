// Package fleet_test rolls a fleet of three local clusters with the
// controller (the real binary) and the local ops plugin (served over
// mutual TLS from the test process, so the test sees every call): the
// availability budget sampled throughout, PodDisruptionBudgets held by the
// drains, a failure on the third cluster halting, then reverting the
// first two, and a controller killed mid-operation re-attaching to it.
package fleet_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// members starts n member clusters side by side, their nodes' kubelets
// at version, stopped when the test ends.
func members(t *testing.T, n int, version string) []*localcluster.Cluster {
	t.Helper()
	out := make([]*localcluster.Cluster, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = testenv.StartTied(localcluster.Options{Name: fmt.Sprintf("member%d", i+1), KubeletVersion: version})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member cluster %d: %v", i+1, err)
		}
		c := out[i]
		t.Cleanup(func() { _ = c.Stop() })
	}
	return out
}

// controllerProc is the controller binary, run as a user of the
// management cluster.
type controllerProc struct {
	cmd  *exec.Cmd
	out  *testenv.SyncBuffer
	done chan struct{}
}

func startController(t *testing.T, c *localcluster.Cluster, ns, runs string) *controllerProc {
	t.Helper()
	kc, err := c.UserKubeconfig("fleet-controller", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	p := &controllerProc{out: &testenv.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(testenv.UpshiftBinary(t), "controller", "--kubeconfig", kc,
		"--namespace", runs, "--watch-namespaces", ns,
		"--metrics-addr", "0", "--health-probe-addr", "0", "--debug")
	p.cmd.Env = append(os.Environ(), "KUBECONFIG=")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("controller output:\n%s", p.out.String())
		}
	})
	return p
}

// kill stops the controller with SIGKILL, as a node failure would.
func (p *controllerProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// servePlugin serves impl over mutual TLS on a loopback port until the
// test ends, and returns the address.
func servePlugin(t *testing.T, impl pluginsdk.Cluster, serverCert, serverKey, clientCA []byte) string {
	t.Helper()
	cfg, err := pluginsdk.ServerTLS(serverCert, serverKey, clientCA)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pluginsdk.Serve(ctx, lis, impl, pluginsdk.WithTLS(cfg)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the plugin's server: %v", err)
		}
	})
	return lis.Addr().String()
}

func clientset(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
