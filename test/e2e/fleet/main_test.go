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
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/plugintest"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// mgmtEnv is the package's cluster as one test's management cluster:
// its clients, the CRDs installed, a namespace for the fleets and one
// for the controller's runs, and a context that ends after timeout or
// with the test.
type mgmtEnv struct {
	t    *testing.T
	ctx  context.Context
	mgmt *localcluster.Cluster
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	ns   string
	runs string
}

// newMgmtEnv installs the CRDs on the package's cluster and makes the
// test's namespaces (testenv.Namespace) with the prefixes ns and, unless
// it is empty, runs.
func newMgmtEnv(t *testing.T, timeout time.Duration, ns, runs string) *mgmtEnv {
	t.Helper()
	mgmt := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	e := &mgmtEnv{t: t, ctx: ctx, mgmt: mgmt, cs: clientset(t, mgmt.RESTConfig())}
	dyn, err := dynamic.NewForConfig(mgmt.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	e.dyn = dyn
	testenv.InstallCRDs(t, mgmt.RESTConfig())
	e.ns = testenv.Namespace(t, ctx, e.cs, ns)
	if runs != "" {
		e.runs = testenv.Namespace(t, ctx, e.cs, runs)
	}
	return e
}

// fleets applies and reads the ClusterVersions of the fleets' namespace.
func (e *mgmtEnv) fleets() *fleets {
	return &fleets{t: e.t, ctx: e.ctx, dyn: e.dyn, ns: e.ns}
}

// newSim is a simulated plugin of cfg.
func newSim(t *testing.T, cfg sim.Config) *sim.Sim {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

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
	return startControllerWith(t, c, ns, runs, nil)
}

// startControllerWith runs the controller watching ns, with env added to
// its environment (a failpoint) and args to its flags.
func startControllerWith(t *testing.T, c *localcluster.Cluster, ns, runs string, env []string, args ...string) *controllerProc {
	t.Helper()
	kc, err := c.UserKubeconfig("fleet-controller", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	p := &controllerProc{out: &testenv.SyncBuffer{}, done: make(chan struct{})}
	flags := append([]string{"controller", "--kubeconfig", kc, "--namespace", runs, "--watch-namespaces", ns,
		"--metrics-addr", "0", "--health-probe-addr", "0", "--debug"}, args...)
	p.cmd = exec.Command(testenv.UpshiftBinary(t), flags...)
	p.cmd.Env = append(append(os.Environ(), "KUBECONFIG="), env...)
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
// test ends, with a certificate from a new CA that also issues the
// controller's client certificate, and returns the address, the CA and
// the client's certificate.
func servePlugin(t *testing.T, impl pluginsdk.Cluster) (string, *plugintest.CA, plugintest.Pair) {
	t.Helper()
	ca := plugintest.NewCA(t)
	server := ca.Issue(t, "127.0.0.1")
	client := ca.Issue(t, "upshift-controller")
	cfg, err := pluginsdk.ServerTLS(server.CertPEM, server.KeyPEM, ca.CertPEM)
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
	return lis.Addr().String(), ca, client
}

func clientset(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
