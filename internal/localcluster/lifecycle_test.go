package localcluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// Three clusters run at once without seeing each other's objects, and
// stopping one leaves the other two serving.
func TestThreeClustersRunIsolated(t *testing.T) {
	testenv.SkipIfShort(t)
	names := []string{"iso-a", "iso-b", "iso-c"}
	clusters := make([]*localcluster.Cluster, len(names))
	errs := make(chan error, len(names))
	for i, n := range names {
		go func() {
			c, err := testenv.StartTied(localcluster.Options{Name: n, Nodes: 1})
			clusters[i] = c
			errs <- err
		}()
	}
	for range names {
		if err := <-errs; err != nil {
			t.Fatalf("start: %v", err)
		}
	}
	stopped := make([]bool, len(clusters))
	t.Cleanup(func() {
		for i, c := range clusters {
			if c != nil && !stopped[i] {
				_ = c.Stop()
			}
		}
	})
	servers := map[string]bool{}
	for i, c := range clusters {
		if servers[c.Server] {
			t.Fatalf("two clusters share the API server %s", c.Server)
		}
		servers[c.Server] = true
		putMarker(t, clientset(t, c), names[i])
	}
	for i, c := range clusters {
		got, err := readMarker(clientset(t, c))
		if err != nil || got != names[i] {
			t.Fatalf("cluster %s sees marker %q (err %v), want its own %q", names[i], got, err, names[i])
		}
	}

	if err := clusters[0].Stop(); err != nil {
		t.Fatalf("stop %s: %v", names[0], err)
	}
	stopped[0] = true
	if left := processesMentioning(clusters[0].Dir); len(left) > 0 {
		t.Fatalf("processes of the stopped cluster remain: %v", left)
	}
	if _, err := os.Stat(clusters[0].Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("data of the stopped cluster remains in %s (stat err %v)", clusters[0].Dir, err)
	}
	for i, c := range clusters[1:] {
		cs := clientset(t, c)
		if got, err := readMarker(cs); err != nil || got != names[i+1] {
			t.Fatalf("after stopping %s, cluster %s answers %q, %v", names[0], names[i+1], got, err)
		}
		// Reading proved the API serves; a write proves etcd does too.
		if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "after-stop"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("write to %s after stopping %s: %v", names[i+1], names[0], err)
		}
	}
}

const childEnv = "UPSHIFT_TEST_CHILD_CLUSTER_DIR"

// runChild is the body of the re-executed test binary: start a cluster tied
// to this process, report its directory and PIDs, and wait to be killed.
func runChild() int {
	dir := os.Getenv(childEnv)
	c, err := localcluster.Start(context.Background(), localcluster.Options{Name: "child", Dir: dir, Nodes: 1})
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	var pids []string
	for _, p := range c.Processes {
		pids = append(pids, fmt.Sprint(p.PID))
	}
	fmt.Println("READY", strings.Join(pids, ","))
	time.Sleep(10 * time.Minute)
	return 0
}

// A test binary killed with SIGKILL leaves no control-plane process behind,
// and the next start in the same directory cleans the stale state.
func TestSIGKILLedOwnerLeavesNoProcess(t *testing.T) {
	testenv.SkipIfShort(t)
	dir, err := os.MkdirTemp("", testenv.DirPrefix+"sigkill-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+dir)
	stdout, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "READY ") {
		_ = child.Process.Kill()
		t.Fatalf("child did not start its cluster: %q %v", line, err)
	}
	pids := strings.Split(strings.TrimSpace(strings.TrimPrefix(line, "READY ")), ",")
	if len(pids) != 5 {
		t.Fatalf("child reports %d processes, want 5 (etcd, apiserver, controller-manager, scheduler, kwok)", len(pids))
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	deadline := time.Now().Add(10 * time.Second)
	for {
		left := append(processesMentioning(dir), livePIDs(pids)...)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s after SIGKILL of the owner these processes still run: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The directory still records the dead cluster; a new start there
	// notices the stale PIDs, cleans up and runs.
	if _, err := os.Stat(filepath.Join(dir, "cluster.json")); err != nil {
		t.Fatalf("expected the killed cluster's state to remain: %v", err)
	}
	var progress strings.Builder
	c, err := localcluster.Start(context.Background(), localcluster.Options{Name: "child", Dir: dir, Nodes: 1, Progress: &progress})
	if err != nil {
		t.Fatalf("restart over stale state: %v", err)
	}
	defer func() { _ = c.Stop() }()
	if !strings.Contains(progress.String(), "stale state") {
		t.Errorf("restart did not report cleaning stale state; progress:\n%s", progress.String())
	}
}

// A stale state whose PIDs now belong to other processes (here: another
// running cluster's, as after PID reuse) is cleaned without signalling them.
func TestStaleStateNeverTouchesAnotherCluster(t *testing.T) {
	a := startTied(t, "stale-a")
	dirB := filepath.Join(t.TempDir(), "b")
	if err := os.MkdirAll(filepath.Join(dirB, "pki"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "pki", "ca.crt"), []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	stale := a.State
	stale.Name, stale.Dir = "stale-b", dirB
	stale.Processes = append(stale.Processes[:0:0], a.Processes...)
	for i := range stale.Processes {
		stale.Processes[i].StartTime++ // same PIDs, different processes
	}
	b, _ := json.Marshal(stale)
	if err := os.WriteFile(filepath.Join(dirB, "cluster.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	if err := localcluster.DownDir(dirB, nil); err != nil {
		t.Fatalf("down of the stale cluster: %v", err)
	}
	if got := livePIDs(pidsOf(a)); len(got) != len(a.Processes) {
		t.Fatalf("down of a stale cluster killed another cluster's processes: %d of %d left", len(got), len(a.Processes))
	}
	if _, err := clientset(t, a).CoreV1().Nodes().List(context.Background(), metav1ListOptions); err != nil {
		t.Fatalf("cluster A stopped answering: %v", err)
	}
}

func pidsOf(c *localcluster.Cluster) []string {
	var pids []string
	for _, p := range c.Processes {
		pids = append(pids, fmt.Sprint(p.PID))
	}
	return pids
}
