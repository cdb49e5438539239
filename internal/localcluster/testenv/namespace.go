package testenv

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates "<prefix>-<test name>-xxxxx" and deletes it after the
// test without waiting for it to go, so each test has objects of its own
// on a cluster its package shares.
func Namespace(t *testing.T, ctx context.Context, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	base := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "-"), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-" + base + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		// The test's context is already done when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Logf("delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}
