package engine_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// TestUpgradeReachesTarget: the pods run the target images, the ConfigMap
// has its new data, and env vars set inline, by another field manager and
// from a fieldRef all survive. Applying the same plan again changes
// nothing.
func TestUpgradeReachesTarget(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	plan := w.upgradePlan(planOptions{})
	r := w.mustExit(0, nil, "apply", "-f", plan)
	mustContain(t, "apply output", r.stdout, "Succeeded", "reached version 2.0.0")

	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")
	w.waitImages("app=agent", "agent", "example.com/shop/agent:2.0.0")
	after := w.capture()
	env := map[string]corev1.EnvVar{}
	for _, e := range after.web.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e
	}
	if env["MODE"].Value != "prod" || env["OUT_OF_BAND"].Value != "kept" || env["NODE"].ValueFrom == nil || env["NODE"].ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("env vars did not survive the upgrade: %+v", after.web.Spec.Template.Spec.Containers[0].Env)
	}
	if after.settings.Data["level"] != "2" {
		t.Errorf("configmap settings: %v", after.settings.Data)
	}
	run := w.run("shop-2.0.0")
	if run.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("run phase %s", run.Status.Phase)
	}
	for _, st := range run.Status.Stages {
		if st.Backup == nil || len(st.Backup.Secrets) == 0 {
			t.Errorf("stage %s has no backup recorded", st.Name)
		}
	}

	writesBefore := len(w.shopWrites())
	again := w.mustExit(0, nil, "apply", "-f", plan)
	mustContain(t, "second apply", again.stdout+again.stderr, "already reached version 2.0.0")
	if n := len(w.shopWrites()); n != writesBefore {
		t.Errorf("applying a completed plan again wrote to the platform: %d writes before, %d after", writesBefore, n)
	}
}

// shopWrites are upshift's writes to the platform's namespace.
func (w *world) shopWrites() []string {
	var out []string
	for _, e := range w.upshiftWrites() {
		if e.ObjectRef != nil && e.ObjectRef.Namespace == "shop" {
			out = append(out, e.Verb+" "+e.Object())
		}
	}
	return out
}

// TestFailuresRollBackAutomatically: a broken image, a failing http gate
// and a step timeout each end in a rollback (exit 2) that leaves every
// touched object as the test captured it.
func TestFailuresRollBackAutomatically(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "degraded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	cases := []struct {
		name     string
		opts     localcluster.Options
		plan     planOptions
		messages []string
		maxTime  time.Duration
	}{
		{name: "broken image", plan: planOptions{webTag: "2.0.0-broken"}, messages: []string{"step web failed", "CrashLoopBackOff"}, maxTime: 90 * time.Second},
		{name: "failing http gate", plan: planOptions{httpGate: failing.URL + "/healthz", gateTimeout: "3s"}, messages: []string{"gate http", "503"}},
		{name: "step timeout", opts: localcluster.Options{PodReadyDelay: 8 * time.Second}, plan: planOptions{webTimeout: "2s"}, messages: []string{"step web failed", "timed out after 2s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, c.opts)
			w.installPlatform()
			before := w.capture()
			start := time.Now()
			r := w.mustExit(2, nil, "apply", "-f", w.upgradePlan(c.plan))
			took := time.Since(start)
			mustContain(t, "apply stderr", r.stderr, append([]string{"rolled back", "restore verified"}, c.messages...)...)
			w.assertRestored(before)
			run := w.run("shop-2.0.0")
			if run.Status.Phase != v1alpha1.RunRolledBack {
				t.Errorf("run phase %s", run.Status.Phase)
			}
			for _, st := range run.Status.Stages {
				if st.Backup != nil && st.Phase != v1alpha1.PhaseRolledBack {
					t.Errorf("stage %s: %s, want RolledBack", st.Name, st.Phase)
				}
			}
			if c.maxTime > 0 && took > c.maxTime {
				t.Errorf("the failure took %s to be caught and undone, want under %s", took, c.maxTime)
			}
		})
	}
}

// TestNoAutoRollbackWaitsForAnOperator: with autoRollback false a failure
// exits 3 and leaves the change in place; `upshift rollback` restores and
// verifies (exit 0).
func TestNoAutoRollbackWaitsForAnOperator(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()
	no := false
	r := w.mustExit(3, nil, "apply", "-f", w.upgradePlan(planOptions{webTag: "2.0.0-broken", autoRollback: &no}))
	mustContain(t, "apply stderr", r.stderr, "NOT rolled back", "upshift rollback shop-2.0.0", "upshift retry shop-2.0.0")
	if got := w.capture().settings.Data["level"]; got != "2" {
		t.Errorf("without autoRollback the config stage should stay applied; level=%q", got)
	}
	rb := w.mustExit(0, nil, "rollback", "shop-2.0.0")
	mustContain(t, "rollback output", rb.stdout, "RolledBack")
	w.assertRestored(before)
}

// TestCorruptBackupRefusesRollback: a flipped byte in a backup chunk makes
// the rollback refuse (exit 3), naming the Secret, and restore nothing.
func TestCorruptBackupRefusesRollback(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	no := false
	w.mustExit(3, nil, "apply", "-f", w.upgradePlan(planOptions{webTag: "2.0.0-broken", autoRollback: &no}))
	run := w.run("shop-2.0.0")
	stage := run.Status.Stages[1]
	if stage.Backup == nil {
		t.Fatalf("stage %s has no backup", stage.Name)
	}
	name := stage.Backup.Secrets[0]
	sec, err := w.cs.CoreV1().Secrets("upshift-system").Get(w.ctx, name, metaGet)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sec.Data {
		if len(v) > 20 {
			v[len(v)/2] ^= 0xff
			sec.Data[k] = v
		}
	}
	if _, err := w.cs.CoreV1().Secrets("upshift-system").Update(w.ctx, sec, metaUpdate); err != nil {
		t.Fatal(err)
	}
	r := w.mustExit(3, nil, "rollback", "shop-2.0.0")
	mustContain(t, "rollback stderr", r.stderr, "upshift-system/"+name)
	if img := w.capture().web.Spec.Template.Spec.Containers[0].Image; !strings.Contains(img, "broken") {
		t.Errorf("a refused rollback changed web's image to %s", img)
	}
}
