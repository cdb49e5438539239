package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// A node NotReady fails the host preflights, naming it; the start is then
// refused with 400 ("preflight checks failed") and nothing starts, also
// with ignoreHostPreflights on a server that does not allow it. On one
// that does, the start bypasses them (HostPreflightsFailedBypassed) and
// the upgrade starts. Each answer is validated against embedded-cluster's
// document. With Chromium, the wizard shows it too (hostPreflightsBrowser):
// the failure, Start disabled; where allowed, the box that enables it,
// and the start goes through. A cluster of its own: a NotReady node would disturb the
// package's other tests. Not parallel: a second cluster starting beside
// the package's browser tests slows them on a small machine.
func TestHostPreflightsBlockTheStartUnlessBypassed(t *testing.T) {
	doc := requireECDocument(t)
	c, err := testenv.StartTied(localcluster.Options{Name: "hostpf", Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	e := newEnvOn(t, c)
	_, catalog, _ := e.platform()
	label := []byte(`{"metadata":{"labels":{"` + localcluster.NotReadyLabel + `":"true"}}}`)
	if _, err := e.cs.CoreV1().Nodes().Patch(e.ctx, "node-1", types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		n, err := e.cs.CoreV1().Nodes().Get(e.ctx, "node-1", metav1.GetOptions{})
		if err == nil && !nodeReady(n.Status.Conditions) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node-1 never turned NotReady")
		}
	}

	s := e.serve("--catalog", catalog)
	ec := newECClient(t, s, doc)
	ec.token = s.login(adminPassword)
	var host ecStatus
	ec.call(http.StatusOK, "POST", hostPreRun, nil, &host)
	if host.Status.State != "Failed" || len(host.Output.Fail) != 1 || !strings.Contains(host.Output.Fail[0].Title+host.Status.Description, "Nodes Ready") ||
		!strings.Contains(host.Status.Description, "not Ready: node-1") {
		t.Fatalf("host preflights with node-1 NotReady: %+v", host)
	}
	var refused apiError
	ec.call(http.StatusBadRequest, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": false}, &refused)
	if !strings.Contains(refused.Message, "preflight checks failed: Nodes Ready: not Ready: node-1") {
		t.Errorf("the start with failed host preflights: %+v", refused)
	}
	ec.call(http.StatusBadRequest, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": true}, &refused)
	if !strings.Contains(refused.Message, "preflight checks failed") || !strings.Contains(refused.Message, "not allowed on this server") {
		t.Errorf("ignoreHostPreflights on a server that does not allow it: %+v", refused)
	}
	browser := withBrowser(t)
	if browser {
		hostPreflightsBlocked(t, e, s, c)
	}
	s.kill()

	s = e.serve("--catalog", catalog, "--allow-ignore-host-preflights")
	ec = newECClient(t, s, doc)
	ec.token = s.login(adminPassword)
	ec.call(http.StatusOK, "GET", hostPreStatus, nil, &host)
	if host.Status.State != "Failed" {
		t.Errorf("the host preflights' results after a restart: %+v", host)
	}
	var started ecStatus
	if browser {
		// The wizard's start, the box ticked; the infrastructure phase
		// then runs.
		hostPreflightsIgnored(t, e, s)
		ec.call(http.StatusOK, "GET", infraStatus, nil, &started)
	} else {
		ec.call(http.StatusOK, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": true}, &started)
	}
	if started.Status.State != "Running" && started.Status.State != "Succeeded" {
		t.Errorf("the start past bypassed host preflights: %+v", started)
	}
}

func nodeReady(conds []corev1.NodeCondition) bool {
	for _, c := range conds {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
