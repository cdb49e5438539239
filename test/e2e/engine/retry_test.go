package engine_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// TestRetryGoesOnFromTheFailedStep: a gate that fails without
// autoRollback stops the run (exit 3) naming `upshift retry`; once the
// cause is fixed, retry re-checks the gate and finishes the run without
// running any succeeded step again (judged by the audit log).
func TestRetryGoesOnFromTheFailedStep(t *testing.T) {
	t.Parallel()
	var healthy atomic.Bool
	var okAnswers atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(rw, r)
			return
		}
		if !healthy.Load() {
			http.Error(rw, "degraded", http.StatusServiceUnavailable)
			return
		}
		okAnswers.Add(1)
		_, _ = rw.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)

	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	no := false
	plan := w.upgradePlan(planOptions{autoRollback: &no, httpGate: srv.URL + "/healthz", gateTimeout: "3s"})
	r := w.mustExit(3, nil, "apply", "-f", plan)
	mustContain(t, "apply stderr", r.stderr, "NOT rolled back", "upshift retry shop-2.0.0")

	failed := w.run("shop-2.0.0")
	if failed.Status.Phase != v1alpha1.RunFailed {
		t.Fatalf("the run is %s, want Failed", failed.Status.Phase)
	}
	done := map[string]bool{}
	for _, st := range failed.Status.Stages {
		for _, s := range st.Steps {
			if s.Phase == v1alpha1.PhaseSucceeded {
				done[stepObjects[s.Name]] = true
			}
		}
	}
	for _, obj := range []string{"configmaps shop/settings", "deployments shop/web", "daemonsets shop/agent"} {
		if !done[obj] {
			t.Fatalf("before the retry, the step writing %s should have succeeded: %+v", obj, failed.Status.Stages)
		}
	}

	healthy.Store(true)
	retryBegan := time.Now()
	w.mustExit(0, nil, "retry", "shop-2.0.0")
	if okAnswers.Load() == 0 {
		t.Errorf("the retry did not check the http gate again")
	}
	if ph := w.run("shop-2.0.0").Status.Phase; ph != v1alpha1.RunSucceeded {
		t.Fatalf("after the retry the run is %s, want Succeeded", ph)
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")

	after := w.writesSince(retryBegan)
	for _, e := range after {
		if done[e.Object()] {
			t.Errorf("the retry wrote a succeeded step's object again: %s %s", e.Verb, e.Object())
		}
	}
}

// writesSince are upshift's writes received at or after t; it waits until
// the audit log shows at least one, since the log is written
// asynchronously and every command saves its run.
func (w *world) writesSince(t time.Time) []localcluster.AuditEvent {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out []localcluster.AuditEvent
		for _, e := range w.upshiftWrites() {
			if !e.RequestReceivedTimestamp.Before(t) {
				out = append(out, e)
			}
		}
		if len(out) > 0 || time.Now().After(deadline) {
			time.Sleep(time.Second) // let the rest of the log land
			var all []localcluster.AuditEvent
			for _, e := range w.upshiftWrites() {
				if !e.RequestReceivedTimestamp.Before(t) {
					all = append(all, e)
				}
			}
			if len(all) == 0 {
				w.t.Fatalf("the audit log shows no write by upshift since %s", t.Format(time.RFC3339Nano))
			}
			return all
		}
		time.Sleep(200 * time.Millisecond)
	}
}
