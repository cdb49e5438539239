package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestInfraUpgradeWaitsForItsWindow: a hop whose plan has a maintenance
// window that is closed now is not a failure: the infrastructure phase
// runs, its status says it waits for the window and when it opens, and
// nothing of the hop begins; once the window opens (the next minute or
// the one after: cron's granularity, so the test waits under 90 s), the
// server drives the hop to its version on its own.
func TestInfraUpgradeWaitsForItsWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	token := s.login(adminPassword)
	// A minute at least 25 s away, so the wait is seen before it ends.
	opens := time.Now().UTC().Add(25 * time.Second).Truncate(time.Minute).Add(time.Minute)
	cron := fmt.Sprintf("%d %d * * *", opens.Minute(), opens.Hour())
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/infra/upgrade", token,
		map[string]any{"targetVersion": "1.1.0", "values": map[string]string{"window": cron}}, nil)
	p := s.waitFor("/api/linux/upgrade/infra/status", token, "the wait for the window", func(p progress) bool {
		return strings.HasPrefix(p.Status.Description, "Waiting for a maintenance window")
	})
	if time.Now().After(opens) {
		t.Fatalf("the wait was seen only after the window opened at %s: the machine is too slow for this test", opens)
	}
	if p.Status.State != "Running" || p.NextWindow == nil || !p.NextWindow.Equal(opens) ||
		!strings.Contains(p.Status.Description, "stage controller") || !strings.Contains(p.Status.Description, opens.Format(time.RFC3339)) {
		t.Errorf("while waiting: state %s, next window %v (want %s): %q", p.Status.State, p.NextWindow, opens, p.Status.Description)
	}
	if _, err := e.cs.AppsV1().Deployments(ns).Get(e.ctx, "web-controller", metaGet); !apierrors.IsNotFound(err) {
		t.Errorf("the hop's first stage began outside its window (web-controller: %v)", err)
	}
	if v := e.version(ns); v != "1.0.0" {
		t.Errorf("version %s while waiting", v)
	}
	p = s.waitFor("/api/linux/upgrade/infra/status", token, "the upgrade done in its window", func(p progress) bool {
		return p.Status.State == "Succeeded" || p.Status.State == "Failed"
	})
	if p.Status.State != "Succeeded" || time.Now().Before(opens) || e.version(ns) != "1.1.0" {
		t.Errorf("after the window opened at %s (now %s): %s %q, version %s", opens, time.Now().UTC(), p.Status.State, p.Status.Description, e.version(ns))
	}
	if !strings.Contains(s.log.String(), "waits for a maintenance window") {
		t.Errorf("the server's log does not say it waits:\n%s", s.log)
	}
}
