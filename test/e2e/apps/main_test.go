// Package apps_test holds the AppRollout acceptance tests: the real
// `upshift controller` process against the real local control plane,
// rolling Deployments whose pods kwok runs, judged by the rollouts'
// status and events and by the cluster's Deployments, ReplicaSets and
// Jobs.
//
// Each test has its own namespace for its rollout, Deployment and
// ServiceAccount, and one for the controller's runs and leases, and
// starts its controller with --watch-namespaces on its own, so parallel
// tests never see each other's rollouts.
package apps_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// env is one test's share of the cluster.
type env struct {
	t    *testing.T
	c    *localcluster.Cluster
	cs   kubernetes.Interface
	kc   client.Client // typed, for AppRollouts
	ctx  context.Context
	ns   string // the rollout's namespace
	runs string // the controller's own namespace
	bin  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	testenv.SkipIfShort(t)
	c := testenv.Cluster(t)
	cfg := c.RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	testenv.InstallCRDs(t, cfg)
	return &env{t: t, c: c, cs: cs, kc: typedClient(t, cfg), ctx: ctx, bin: testenv.UpshiftBinary(t),
		ns: testenv.Namespace(t, ctx, cs, "app"), runs: testenv.Namespace(t, ctx, cs, "app-ctl")}
}

func typedClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s, err := schemeWithUpshift()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startController runs a controller as its own client-certificate user
// on the test's namespaces, looking at waiting rollouts every 200 ms.
func (e *env) startController(user string, extraArgs ...string) *testenv.Process {
	e.t.Helper()
	kc, err := e.c.UserKubeconfig(user, "system:masters")
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(e.bin, append([]string{"controller", "--kubeconfig", kc,
		"--namespace", e.runs, "--watch-namespaces", e.ns,
		"--metrics-addr", "0", "--health-probe-addr", testenv.FreeAddr(e.t),
		"--app-poll", "200ms", "--debug"}, extraArgs...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	return testenv.Start(e.t, "controller "+user, cmd)
}

// kubectl runs the cluster's kubectl as the test's admin.
func (e *env) kubectl(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.c.Binaries().Path("kubectl"), append([]string{"--kubeconfig", e.c.KubeconfigPath()}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// annotate sets an action annotation on the rollout as an operator does.
func (e *env) annotate(name, key, value string) {
	e.t.Helper()
	if out, err := e.kubectl("", "annotate", "-n", e.ns, "--overwrite", "approllout/"+name, key+"="+value); err != nil {
		e.t.Fatalf("kubectl annotate approllout/%s %s=%s: %v\n%s", name, key, value, err, out)
	}
}

// rollout reads the rollout from the API server.
func (e *env) rollout(name string) *v1alpha1.AppRollout {
	e.t.Helper()
	a := &v1alpha1.AppRollout{}
	if err := e.kc.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, a); err != nil {
		e.t.Fatalf("get approllout %s: %v", name, err)
	}
	return a
}

// waitFor polls the rollout until ok holds of it.
func (e *env) waitFor(name, what string, timeout time.Duration, ok func(*v1alpha1.AppRollout) bool) *v1alpha1.AppRollout {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var a *v1alpha1.AppRollout
	for time.Now().Before(deadline) {
		if a = e.rollout(name); ok(a) {
			return a
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatalf("approllout %s: not %s after %s; status:\n%+v", name, what, timeout, a.Status)
	return nil
}
