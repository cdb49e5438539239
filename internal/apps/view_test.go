package apps

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func viewRollout(phase v1alpha1.AppPhase, step int32) *v1alpha1.AppRollout {
	a := &v1alpha1.AppRollout{}
	a.Spec.UpgradeStrategy.Type = v1alpha1.StrategyCanary
	a.Spec.UpgradeStrategy.Canary = &v1alpha1.AppCanary{Enabled: true, Steps: []v1alpha1.AppCanaryStep{{Weight: 10, Pause: 60}, {Weight: 50, Pause: 600}, {Weight: 100}}}
	a.Status.Phase, a.Status.CanaryStep, a.Status.Attempt = phase, step, 1
	return a
}

func TestStepsMarkTheCurrentOneAndWhatItWaitsFor(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	a := viewRollout(v1alpha1.AppDeploying, 1)
	if got := Steps(a, now); got[0].State != StepDone || got[1].State != StepCurrent || got[1].Detail != "pods starting" || got[2].State != StepPending {
		t.Errorf("pods starting at step 2: %+v", got)
	}
	a.Status.PauseStartedAt = &metav1.Time{Time: now.Add(-6 * time.Minute)}
	if got := Steps(a, now)[1].Detail; got != "holding, 4m left" {
		t.Errorf("6m into a 10m pause: %q", got)
	}
	// spec.paused stops the pause's clock where it was.
	a.Status.PausedAt = &metav1.Time{Time: now.Add(-5 * time.Minute)}
	if got := Steps(a, now)[1].Detail; got != "holding, 9m left" {
		t.Errorf("paused 1m into the pause: %q", got)
	}
	a.Status.PausedAt = nil
	if got := Steps(a, now.Add(time.Hour))[1].Detail; got != "moving on" {
		t.Errorf("past the pause: %q", got)
	}
	for _, p := range []v1alpha1.AppPhase{v1alpha1.AppHealthChecking, v1alpha1.AppHealthy} {
		for _, s := range Steps(viewRollout(p, 2), now) {
			if s.State != StepDone {
				t.Errorf("%s: step %d%% is %s", p, s.Weight, s.State)
			}
		}
	}
	rolling := viewRollout(v1alpha1.AppDeploying, 0)
	rolling.Spec.UpgradeStrategy.Type = v1alpha1.StrategyRolling
	if got := Steps(rolling, now); got != nil {
		t.Errorf("a Rolling rollout ignores its canary steps: %+v", got)
	}
	if got := StepOf(a); got != "2/3 0%" {
		t.Errorf("StepOf: %q", got)
	}
}

func TestRequestsAreWhatDecideAnswers(t *testing.T) {
	now := metav1.Now()
	holding := viewRollout(v1alpha1.AppDeploying, 1)
	holding.Status.PauseStartedAt = &now
	failed := viewRollout(v1alpha1.AppFailed, 0)
	failed.Status.Rollback = &v1alpha1.AppRollback{Reason: "x"}
	failedDone := failed.DeepCopy()
	failedDone.Status.Rollback.Done = true
	paused := holding.DeepCopy()
	paused.Spec.Paused = true
	pending := viewRollout(v1alpha1.AppPending, 0)
	preview := viewRollout(v1alpha1.AppDeploying, 0)
	preview.Status.BlueGreen = &v1alpha1.AppBlueGreenStatus{PreviewReadyAt: &now}
	switched := preview.DeepCopy()
	switched.Status.BlueGreen.SwitchedAt = &now
	for _, c := range []struct {
		name string
		a    *v1alpha1.AppRollout
		want []Request
	}{
		{"canary step holding", holding, []Request{RequestPromote, RequestAbort, RequestPause}},
		{"canary pods starting", viewRollout(v1alpha1.AppDeploying, 1), []Request{RequestAbort, RequestPause}},
		{"preview ready", preview, []Request{RequestPromote, RequestAbort, RequestPause}},
		{"preview switched", switched, []Request{RequestAbort, RequestPause}},
		{"migrating", viewRollout(v1alpha1.AppMigrating, 0), []Request{RequestAbort, RequestPause}},
		{"pending before an attempt", pending, []Request{RequestPause}},
		{"rolling back", failed, nil},
		{"rollback failed", failedDone, []Request{RequestRetry}},
		{"rolled back", viewRollout(v1alpha1.AppRolledBack, 0), []Request{RequestRetry}},
		{"healthy", viewRollout(v1alpha1.AppHealthy, 2), nil},
		{"paused", paused, []Request{RequestPromote, RequestAbort, RequestResume}},
	} {
		if got := Requests(c.a); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPatchAsksWithAFreshValue(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for req, want := range map[Request]string{
		RequestPromote: `{"metadata":{"annotations":{"upshift.dev/promote":"2026-11-29T10:00:00Z"}}}`,
		RequestAbort:   `{"metadata":{"annotations":{"upshift.dev/abort":"2026-11-29T10:00:00Z"}}}`,
		RequestRetry:   `{"metadata":{"annotations":{"upshift.dev/retry":"2026-11-29T10:00:00Z"}}}`,
		RequestPause:   `{"spec":{"paused":true}}`,
		RequestResume:  `{"spec":{"paused":false}}`,
	} {
		b, err := Patch(req, now, "")
		if err != nil || !json.Valid(b) || string(b) != want {
			t.Errorf("%s: %s (%v), want %s", req, b, err, want)
		}
	}
	if b, _ := Patch(RequestPause, now, "42"); string(b) != `{"metadata":{"resourceVersion":"42"},"spec":{"paused":true}}` {
		t.Errorf("locked to version 42: %s", b)
	}
	if _, err := Patch("delete", now, ""); err == nil {
		t.Error("an unknown request made a patch")
	}
}

// An abort while a rollout waits before its next attempt (Pending, its
// status still holding the last attempt's backup) changes nothing: it
// would otherwise undo the version that succeeded. Requests does not
// offer it there.
func TestAbortWhilePendingKeepsTheLastSuccess(t *testing.T) {
	spec := seedSpec()
	spec.UpgradeStrategy = v1alpha1.AppUpgradeStrategy{Type: v1alpha1.StrategyRolling}
	w := newWorld(t, spec, 3, "registry.example.com/shop:v1.0.0")
	w.run(10)
	if w.app.Status.Phase != v1alpha1.AppHealthy {
		t.Fatalf("not Healthy: %+v", w.app.Status)
	}
	w.app.Spec.Version = "v3.0.0"
	w.app.Status.Phase = v1alpha1.AppPending // as a rollout waiting for its group or a Service is
	w.app.Status.Message = "waiting"
	if slices.Contains(Requests(w.app), RequestAbort) {
		t.Errorf("abort offered while Pending: %v", Requests(w.app))
	}
	w.app.Annotations = map[string]string{v1alpha1.AnnotationAbort: "1"}
	w.trace = nil
	w.step()
	if st := w.app.Status; st.Phase == v1alpha1.AppFailed || st.Rollback != nil || firstImage(w.dep) != "registry.example.com/shop:v2.0.0" {
		t.Errorf("abort while Pending: phase %s, rollback %+v, image %s (trace %v)", st.Phase, st.Rollback, firstImage(w.dep), w.trace)
	}
}

// Each measurement of a Job metric has a Job of its own, within a name's
// 63 characters, and the same one when asked again.
func TestMeasurementJobsAreOnePerMeasurement(t *testing.T) {
	a := viewRollout(v1alpha1.AppDeploying, 0)
	a.Name, a.UID = strings.Repeat("checkout-service-", 3)+"x", "uid-1"
	started := metav1.NewTime(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	a.Status.Analysis = &v1alpha1.AppAnalysisStatus{Kind: v1alpha1.AnalysisCanary, StartedAt: started,
		Metrics: []v1alpha1.MetricResult{{Name: "Smoke_Test", Count: 1}}}
	name := func(mutate func(*v1alpha1.AppRollout)) string {
		b := a.DeepCopy()
		mutate(b)
		return measurementJob(b, "Smoke_Test", nil).Name
	}
	first := name(func(*v1alpha1.AppRollout) {})
	seen := map[string]string{first: "first"}
	for what, m := range map[string]func(*v1alpha1.AppRollout){
		"the next measurement": func(b *v1alpha1.AppRollout) { b.Status.Analysis.Metrics[0].Count = 2 },
		"the next attempt":     func(b *v1alpha1.AppRollout) { b.Status.Attempt = 2 },
		"a resumed analysis":   func(b *v1alpha1.AppRollout) { b.Status.Analysis.StartedAt = metav1.NewTime(started.Add(time.Minute)) },
		"another kind":         func(b *v1alpha1.AppRollout) { b.Status.Analysis.Kind = v1alpha1.AnalysisPostPromotion },
	} {
		n := name(m)
		if other, dup := seen[n]; dup {
			t.Errorf("%s has the Job name of %s: %s", what, other, n)
		}
		seen[n] = what
	}
	if len(first) > 63 || first != name(func(*v1alpha1.AppRollout) {}) || !strings.Contains(first, "smoke-test-2") {
		t.Errorf("job name %q: want ≤ 63 characters, stable, naming the metric and the measurement", first)
	}
}
