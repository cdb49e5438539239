package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/kube"
)

// TestKubectlLogs: `kubectl logs` of a running pod, with the cluster's own
// kubectl and kubeconfig, prints the fake kubelet's log line.
func TestKubectlLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	kubectl := e.c.Binaries().Path("kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl binary: %v", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "talker"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.com/talker:1.0"}}},
	}
	if _, err := e.cs.CoreV1().Pods(e.ns).Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	if h, err := e.w.WaitCurrent(e.ctx, kube.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: e.ns, Name: "talker"}, waitTimeout); err != nil {
		t.Fatalf("wait pod: %v", err)
	} else {
		t.Logf("pod: %s", h)
	}

	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", e.c.KubeconfigPath(), "logs", "-n", e.ns, "talker", "-c", "main")
	cmd.Env = append(os.Environ(), "KUBECONFIG=") // only the flag counts
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl logs: %v\nstderr: %s", err, stderr.String())
	}
	const want = "this container runs on a kwok fake node"
	if !strings.Contains(string(out), want) {
		t.Errorf("kubectl logs printed %q, want it to contain %q", out, want)
	}
}
