// Package engine_test holds the engine's acceptance tests: the real
// `upshift` binary, run as a subprocess against a real local control
// plane of its own per test, judged by what the cluster holds and by the
// apiserver's audit log under Upshift's own user, not by Upshift's records.
package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// upshiftUser is the client-certificate user the binary runs as, so the
// audit log tells its requests apart from the test's.
const upshiftUser = "upshift-under-test"

// repoRoot is two directories up from this package.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// upshiftBinary builds cmd/upshift once per test process.
func upshiftBinary(t *testing.T) string { return testenv.UpshiftBinary(t) }

// world is one test's cluster and the binary pointed at it.
type world struct {
	t          *testing.T
	c          *localcluster.Cluster
	cs         kubernetes.Interface
	dyn        dynamic.Interface
	ctx        context.Context
	kubeconfig string // the upshift user's
	bin        string
	env        []string
}

// newWorld starts a cluster for this test alone.
func newWorld(t *testing.T, opts localcluster.Options) *world {
	t.Helper()
	testenv.SkipIfShort(t)
	bin := upshiftBinary(t)
	if opts.Name == "" {
		opts.Name = "engine"
	}
	c, err := testenv.StartTied(opts)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Logf("stop cluster: %v", err)
		}
	})
	kc, err := c.UserKubeconfig(upshiftUser, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return &world{t: t, c: c, cs: cs, dyn: dyn, ctx: ctx, kubeconfig: kc, bin: bin,
		env: append(os.Environ(), "KUBECONFIG="+kc)}
}

// result of one upshift invocation.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return "exit " + strconv.Itoa(r.code) + "\n--- stdout\n" + r.stdout + "\n--- stderr\n" + r.stderr
}

// upshift runs the binary to its end.
func (w *world) upshift(extraEnv []string, args ...string) result {
	w.t.Helper()
	cmd := w.command(extraEnv, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			code = -int(st.Signal())
		} else {
			code = ee.ExitCode()
		}
	} else if err != nil {
		w.t.Fatalf("run upshift %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func (w *world) command(extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(w.ctx, w.bin, args...)
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	cmd.Dir = repoRoot()
	return cmd
}

// mustExit runs upshift and fails the test unless it exits with code.
func (w *world) mustExit(code int, extraEnv []string, args ...string) result {
	w.t.Helper()
	r := w.upshift(extraEnv, args...)
	if r.code != code {
		w.t.Fatalf("upshift %s: want exit %d, got %s", strings.Join(args, " "), code, r)
	}
	return r
}

// upshiftWrites are the writes the binary made, from the audit log.
func (w *world) upshiftWrites() []localcluster.AuditEvent {
	w.t.Helper()
	events, err := w.c.ReadAudit()
	if err != nil {
		w.t.Fatal(err)
	}
	var out []localcluster.AuditEvent
	for _, e := range localcluster.ByUser(events, upshiftUser) {
		if e.IsWrite() {
			out = append(out, e)
		}
	}
	return out
}

var (
	metaGet    = metav1.GetOptions{}
	metaUpdate = metav1.UpdateOptions{}
)
