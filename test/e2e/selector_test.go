package e2e

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/kube"
)

// TestSelectorWait: a selector that matches nothing fails at once with
// ErrNoMatch (not after the timeout); one that matches settles when all
// its objects are Current.
func TestSelectorWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)

	start := time.Now()
	h, err := e.w.WaitSelectorCurrent(e.ctx, kube.SelectorRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.ns, Selector: "app=nothing-here"}, waitTimeout)
	elapsed := time.Since(start)
	if !errors.Is(err, kube.ErrNoMatch) {
		t.Fatalf("wait for an empty selector: health %s, err %v; want ErrNoMatch", h, err)
	}
	if !errors.Is(err, kube.ErrFailing) {
		t.Errorf("ErrNoMatch error %q does not match ErrFailing", err)
	}
	if !strings.Contains(err.Error(), "app=nothing-here") {
		t.Errorf("error %q does not name the selector", err)
	}
	if elapsed > 10*time.Second {
		t.Errorf("empty selector reported after %s, want at once", elapsed.Round(time.Millisecond))
	}
	t.Logf("empty selector after %s: %v", elapsed.Round(time.Millisecond), err)

	for _, name := range []string{"front", "back"} {
		d := deployment(name, 2, "example.com/"+name+":1.0")
		d.Labels["tier"] = "web"
		if _, err := e.cs.AppsV1().Deployments(e.ns).Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create deployment %s: %v", name, err)
		}
	}
	h, err = e.w.WaitSelectorCurrent(e.ctx, kube.SelectorRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.ns, Selector: "tier=web"}, waitTimeout)
	if err != nil {
		t.Fatalf("wait tier=web: %v", err)
	}
	if !strings.Contains(h.Message, "all 2 Current") {
		t.Errorf("health %s, want all 2 Current", h)
	}
	for _, name := range []string{"front", "back"} {
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status.AvailableReplicas != 2 {
			t.Errorf("deployment %s: %d available after the selector wait, want 2", name, d.Status.AvailableReplicas)
		}
	}
}

// TestWaitTimeout: waiting for an object that never comes ends with
// ErrTimeout after the given time, not before, and says what it waited for.
func TestWaitTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	const timeout = 2 * time.Second
	start := time.Now()
	_, err := e.w.WaitCurrent(e.ctx, kube.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.ns, Name: "ghost"}, timeout)
	elapsed := time.Since(start)
	if !errors.Is(err, kube.ErrTimeout) || errors.Is(err, kube.ErrFailing) {
		t.Fatalf("err %v, want ErrTimeout only", err)
	}
	if elapsed < timeout || elapsed > timeout+5*time.Second {
		t.Errorf("timed out after %s, want about %s", elapsed.Round(time.Millisecond), timeout)
	}
	if !strings.Contains(err.Error(), "deployment "+e.ns+"/ghost: not found") {
		t.Errorf("error %q does not say the deployment was not found", err)
	}
}
