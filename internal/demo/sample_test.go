package demo

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The sample ends on 1.1.0 with every pod running it, after reporting the
// broken 1.2.0 as CrashLoopBackOff with the pod's name.
func TestSampleUpgradeEndsOnGoodVersion(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out strings.Builder
	if err := RunSample(ctx, c.RESTConfig(), &out); err != nil {
		t.Fatalf("sample: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "CrashLoopBackOff") || !strings.Contains(out.String(), "pod "+Namespace+"/"+deployName+"-") {
		t.Errorf("output does not show the broken pod:\n%s", out.String())
	}
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + deployName})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.Image != image+":1.1.0" || !s.Ready {
				t.Errorf("pod %s runs %s (ready %t), want %s:1.1.0 ready", p.Name, s.Image, s.Ready, image)
			}
		}
		running++
	}
	if running != 3 {
		t.Errorf("%d pods, want 3", running)
	}
}
