// Package profiles_test holds the acceptance tests of the example
// profiles (examples/liqo, examples/cozystack): each installs its
// platform's shaped install on the real local control plane and upgrades
// it with the example's catalog, with the real `upshift` binary (the CLI,
// and `upshift controller` driving a PlatformUpgrade).
package profiles_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// repo is the repository's root, from this package's directory.
var repo = filepath.Join("..", "..", "..")

// env is one test's share of the cluster.
type env struct {
	t   *testing.T
	c   *localcluster.Cluster
	cfg *rest.Config
	cs  kubernetes.Interface
	dyn dynamic.Interface
	ctx context.Context
	bin string
}

func newEnv(t *testing.T, timeout time.Duration) *env {
	t.Helper()
	testenv.SkipIfShort(t)
	c := testenv.Cluster(t)
	cfg := c.RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	testenv.InstallCRDs(t, cfg)
	return &env{t: t, c: c, cfg: cfg, cs: cs, dyn: dyn, ctx: ctx, bin: testenv.UpshiftBinary(t)}
}

// kubectl runs the cluster's kubectl as the admin; it fails the test
// when kubectl does.
func (e *env) kubectl(args ...string) string {
	e.t.Helper()
	out, err := e.tryKubectl(args...)
	if err != nil {
		e.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (e *env) tryKubectl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.c.Binaries().Path("kubectl"), append([]string{"--kubeconfig", e.c.KubeconfigPath()}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// upshift runs the CLI with the admin kubeconfig and returns its output
// and exit code.
func (e *env) upshift(args ...string) (string, int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, append(args, "--kubeconfig", e.c.KubeconfigPath())...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("upshift %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return out.String(), code
}

// startController runs `upshift controller` as its own client-certificate
// user on the given namespaces, until the test ends.
func (e *env) startController(user, runs, watch string) *testenv.SyncBuffer {
	e.t.Helper()
	kc, err := e.c.UserKubeconfig(user, "system:masters")
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(e.bin, "controller", "--kubeconfig", kc,
		"--namespace", runs, "--watch-namespaces", watch,
		"--metrics-addr", testenv.FreeAddr(e.t), "--health-probe-addr", testenv.FreeAddr(e.t),
		"--lease-duration", "3s", "--lease-renew", "1s", "--debug",
		"--allow-http-sources") // the tests serve sources from http://127.0.0.1
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	return testenv.Start(e.t, "controller "+user, cmd).Out
}

func toYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
