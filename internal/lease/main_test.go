package lease

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// Short timings keep the tests fast; the logic is the same at 10s/2s.
const (
	testDuration = 2 * time.Second
	testRenew    = 500 * time.Millisecond
)

// The test binary re-executes itself as a lease holder, so a test can
// SIGKILL a real process that holds the lease.
const (
	envHold       = "UPSHIFT_LEASE_TEST_HOLD"
	envKubeconfig = "UPSHIFT_LEASE_TEST_KUBECONFIG"
	envNamespace  = "UPSHIFT_LEASE_TEST_NAMESPACE"
)

func TestMain(m *testing.M) {
	if run := os.Getenv(envHold); run != "" {
		os.Exit(holdForParent(run))
	}
	testenv.Main(m)
}

// holdForParent takes the lease, says "held" on stdout and keeps it until
// its stdin closes (the parent test ended) or it is killed.
func holdForParent(run string) int {
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv(envKubeconfig))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, err := Acquire(context.Background(), cs, Config{
		Namespace: os.Getenv(envNamespace), Duration: testDuration, RenewEvery: testRenew, Identity: CurrentIdentity(run),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
	h.Release()
	return 0
}

// startHolder starts a process that holds the lease in ns for run and
// returns once it holds it.
func startHolder(t *testing.T, kubeconfig, ns, run string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHold+"="+run, envKubeconfig+"="+kubeconfig, envNamespace+"="+ns)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		if l != "held" {
			t.Fatalf("holder process said %q; stderr:\n%s", l, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("holder process did not take the lease in 30s; stderr:\n%s", stderr)
	}
	return cmd
}

// testNamespace is unique per test run, so -count=N starts afresh.
func testNamespace(prefix string, t *testing.T) string {
	// A subtest's name holds "/" and "_", which a namespace may not.
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("%s-%s-%s", prefix, name, strings.ToLower(rand.Text()[:6]))
}
