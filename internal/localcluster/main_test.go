package localcluster_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	// Lifecycle tests start and stop their own clusters; no shared one.
	os.Exit(m.Run())
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// startTied starts a cluster tied to the test process and stops it at the end.
func startTied(t *testing.T, name string) *localcluster.Cluster {
	t.Helper()
	testenv.SkipIfShort(t)
	c, err := testenv.StartTied(localcluster.Options{Name: name, Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("start cluster %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop cluster %s: %v", name, err)
		}
	})
	return c
}

func clientset(t *testing.T, c *localcluster.Cluster) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// putMarker writes a ConfigMap naming the cluster, to tell clusters apart.
func putMarker(t *testing.T, cs kubernetes.Interface, value string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "marker", Namespace: "default"}, Data: map[string]string{"cluster": value}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create marker in %s: %v", value, err)
	}
}

func readMarker(cs kubernetes.Interface) (string, error) {
	cm, err := cs.CoreV1().ConfigMaps("default").Get(context.Background(), "marker", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return cm.Data["cluster"], nil
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// processesMentioning lists PIDs whose command line contains s.
func processesMentioning(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%s/cmdline", e.Name()))
		if err != nil || len(b) == 0 {
			continue
		}
		if strings.Contains(string(b), s) && e.Name() != fmt.Sprint(os.Getpid()) {
			pids = append(pids, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " ")[:min(120, len(b))])
		}
	}
	return pids
}

// livePIDs returns the PIDs that still exist and are not zombies: a process
// that is exiting has already lost its command line but is not gone yet.
func livePIDs(pids []string) []string {
	var live []string
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) && s[i+2] == 'Z' {
			continue
		}
		live = append(live, "pid "+pid)
	}
	return live
}

var metav1ListOptions = metav1.ListOptions{}
