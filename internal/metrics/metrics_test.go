package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// newRun is a run of a plan of two stages: crds (a crds step, a ready and
// an http gate) and apps (an image step).
func newRun() *v1alpha1.UpgradeRun {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo-1.1.0"}}
	p.Spec = v1alpha1.UpgradePlanSpec{Version: "1.1.0", Stages: []v1alpha1.Stage{
		{Name: "crds", Steps: []v1alpha1.Step{{Name: "crds", CRDs: &v1alpha1.CRDsStep{}}}, Gates: []v1alpha1.Gate{
			{Ready: &v1alpha1.ReadyGate{Kind: "Deployment", Namespace: "web", Name: "web"}},
			{HTTP: &v1alpha1.HTTPGate{URL: "https://web.example.com/healthz"}},
		}},
		{Name: "apps", Steps: []v1alpha1.Step{{Name: "web", Image: &v1alpha1.ImageStep{}}}},
	}}
	return engine.NewRun(p, "sha256:a", nil, t0)
}

var ok = engine.Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}, Rollback: &v1alpha1.Rollback{}}

func fail(msg string) engine.Outcome {
	return engine.Outcome{Message: msg, Rollback: &v1alpha1.Rollback{}}
}

// act begins the run's next action at begin and completes it at end with
// o, observing both transitions; it returns the action.
func act(t *testing.T, r *v1alpha1.UpgradeRun, o engine.Outcome, begin, end time.Time) engine.Action {
	t.Helper()
	a := engine.Next(r)
	if a.Kind == engine.Done {
		t.Fatal("the run is done")
	}
	engine.Begin(r, a, begin)
	Observe(engine.Event{Action: a, Begin: true, Run: r})
	engine.Complete(r, a, o, end)
	Observe(engine.Event{Action: a, Outcome: o, Run: r})
	return a
}

// histogram is the sample count and sum of one series of h.
func histogram(t *testing.T, h *prometheus.HistogramVec, labels ...string) (uint64, float64) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(h)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			match := true
			for i, l := range m.GetLabel() { // sorted by name, as are the labels asked
				match = match && l.GetValue() == labels[i]
			}
			if match {
				return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
			}
		}
	}
	return 0, 0
}

// delta runs f and returns how much get changed.
func delta(get func() float64, f func()) float64 {
	before := get()
	f()
	return get() - before
}

func counter(c *prometheus.CounterVec, labels ...string) func() float64 {
	return func() float64 { return testutil.ToFloat64(c.WithLabelValues(labels...)) }
}

// Every saved transition counts once, by event and action kind.
func TestObserveCountsTransitions(t *testing.T) {
	r := newRun()
	type series struct{ event, action string }
	want := map[series]float64{
		{"begin", "backup"}: 2, {"succeeded", "backup"}: 2,
		{"begin", "step"}: 2, {"succeeded", "step"}: 1, {"failed", "step"}: 1,
		{"begin", "gate"}: 2, {"succeeded", "gate"}: 2,
		{"begin", "restore"}: 2, {"succeeded", "restore"}: 2,
	}
	before := map[series]float64{}
	for s := range want {
		before[s] = counter(Transitions, s.event, s.action)()
	}
	for _, o := range []engine.Outcome{ok, ok, ok, ok, ok, fail("image pull"), ok, ok} {
		act(t, r, o, t0, t0)
	}
	if r.Status.Phase != v1alpha1.RunRolledBack {
		t.Fatalf("run %s, want RolledBack", r.Status.Phase)
	}
	for s, n := range want {
		if got := counter(Transitions, s.event, s.action)() - before[s]; got != n {
			t.Errorf("transitions{event=%s,action=%s} +%v, want +%v", s.event, s.action, got, n)
		}
	}
}

// Steps and gates are timed by the kind the plan gives them, and by
// outcome; a Begin times nothing.
func TestObserveTimesStepsAndGates(t *testing.T) {
	r := newRun()
	act(t, r, ok, t0, t0) // backup
	n0, s0 := histogram(t, StepDuration, "crds", "succeeded")
	act(t, r, ok, t0, t0.Add(3*time.Second)) // crds
	n1, s1 := histogram(t, StepDuration, "crds", "succeeded")
	if n1-n0 != 1 || s1-s0 != 3 {
		t.Errorf("crds step: +%d samples, +%vs; want +1, +3s", n1-n0, s1-s0)
	}

	n0, s0 = histogram(t, StepDuration, "ready", "succeeded")
	act(t, r, ok, t0, t0.Add(2*time.Second)) // ready gate
	n1, s1 = histogram(t, StepDuration, "ready", "succeeded")
	if n1-n0 != 1 || s1-s0 != 2 {
		t.Errorf("ready gate: +%d samples, +%vs; want +1, +2s", n1-n0, s1-s0)
	}

	// A gate that fails counts as a gate failure of its kind.
	n0, s0 = histogram(t, StepDuration, "http", "failed")
	var failures float64
	d := delta(counter(GateFailures, "http"), func() {
		failures = delta(counter(GateFailures, "ready"), func() {
			act(t, r, fail("503"), t0, t0.Add(5*time.Second)) // http gate
		})
	})
	n1, s1 = histogram(t, StepDuration, "http", "failed")
	if n1-n0 != 1 || s1-s0 != 5 {
		t.Errorf("http gate: +%d samples, +%vs; want +1, +5s", n1-n0, s1-s0)
	}
	if d != 1 || failures != 0 {
		t.Errorf("gate failures: http +%v, ready +%v; want +1, +0", d, failures)
	}

	// A Begin alone times nothing.
	n0, _ = histogram(t, StepDuration, "image", "succeeded")
	m0, _ := histogram(t, StepDuration, "image", "failed")
	r = newRun()
	for range 5 { // up to the image step of apps
		act(t, r, ok, t0, t0)
	}
	a := engine.Next(r)
	engine.Begin(r, a, t0)
	Observe(engine.Event{Action: a, Begin: true, Run: r})
	n1, _ = histogram(t, StepDuration, "image", "succeeded")
	m1, _ := histogram(t, StepDuration, "image", "failed")
	if a.Kind != engine.RunStep || n1 != n0 || m1 != m0 {
		t.Errorf("the Begin of %s timed a step", a)
	}
}

// A stage is timed once, on the completion that ends it.
func TestObserveTimesStages(t *testing.T) {
	r := newRun()
	n0, s0 := histogram(t, StageDuration, "succeeded")
	act(t, r, ok, t0, t0.Add(time.Second))                      // backup
	act(t, r, ok, t0.Add(time.Second), t0.Add(2*time.Second))   // crds
	act(t, r, ok, t0.Add(2*time.Second), t0.Add(3*time.Second)) // ready
	if n, _ := histogram(t, StageDuration, "succeeded"); n != n0 {
		t.Errorf("stage timed before it ended")
	}
	act(t, r, ok, t0.Add(3*time.Second), t0.Add(4*time.Second)) // the last gate
	n1, s1 := histogram(t, StageDuration, "succeeded")
	if n1-n0 != 1 || s1-s0 != 4 {
		t.Errorf("stage crds: +%d samples, +%vs; want +1, +4s", n1-n0, s1-s0)
	}

	f0, _ := histogram(t, StageDuration, "failed")
	act(t, r, ok, t0, t0)        // backup apps
	act(t, r, fail("x"), t0, t0) // web fails
	act(t, r, ok, t0, t0)        // restore apps
	act(t, r, ok, t0, t0)        // restore crds
	f1, _ := histogram(t, StageDuration, "failed")
	if f1-f0 != 1 {
		t.Errorf("stage apps failed: +%d samples, want +1 (restores not timed as stages)", f1-f0)
	}
}

// Restores count as rollbacks, verified or failed.
func TestObserveCountsRollbacks(t *testing.T) {
	for _, tc := range []struct {
		o       engine.Outcome
		outcome string
	}{
		{ok, "verified"},
		{fail("conflict"), "failed"},
	} {
		r := newRun()
		for _, o := range []engine.Outcome{ok, ok, ok, ok, ok, fail("image pull")} {
			act(t, r, o, t0, t0)
		}
		var other float64
		d := delta(counter(Rollbacks, tc.outcome), func() {
			other = delta(counter(Rollbacks, map[string]string{"verified": "failed", "failed": "verified"}[tc.outcome]), func() {
				if a := act(t, r, tc.o, t0, t0); a.Kind != engine.Restore {
					t.Fatalf("%s, want a restore", a)
				}
			})
		})
		if d != 1 || other != 0 {
			t.Errorf("a restore %s: +%v %s, +%v the other; want +1, +0", tc.outcome, d, tc.outcome, other)
		}
	}
}

// An event about no stage of the run counts nothing.
func TestObserveIgnoresUnknownStages(t *testing.T) {
	r := newRun()
	for _, stage := range []int{-1, 2} {
		d := delta(counter(Transitions, "begin", "backup"), func() {
			Observe(engine.Event{Action: engine.Action{Kind: engine.Backup, Stage: stage}, Begin: true, Run: r})
		})
		if d != 0 {
			t.Errorf("stage %d counted", stage)
		}
	}
}

// Runs counts each run in the phase last set, every phase always
// reported; "" forgets a run.
func TestRuns(t *testing.T) {
	runs := map[string]v1alpha1.RunPhase{"a": v1alpha1.RunRunning, "b": v1alpha1.RunRunning, "c": v1alpha1.RunFailed}
	for run, phase := range runs {
		SetRun("test-runs-"+run, phase)
		t.Cleanup(func() { SetRun("test-runs-"+run, "") })
	}
	SetRun("test-runs-a", v1alpha1.RunSucceeded) // moved on
	SetRun("test-runs-b", "")                    // gone

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Runs)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{"Pending": 0, "Running": 0, "Succeeded": 1, "Failed": 1, "RollingBack": 0, "RolledBack": 0, "RollbackFailed": 0, "Aborted": 0}
	if len(got) != len(want) {
		t.Errorf("phases %v, want %v", got, want)
	}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("upshift_runs{phase=%s} %v, want %v", p, got[p], n)
		}
	}
	if n := testutil.CollectAndCount(Runs, "upshift_runs"); n != len(want) {
		t.Errorf("%d series, want %d", n, len(want))
	}
}

// Register adds every metric once; a second call does nothing.
func TestRegister(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	Register(reg)
	Register(reg) // would panic on a duplicate
	if n, err := testutil.GatherAndCount(reg, "upshift_runs"); err != nil || n == 0 {
		t.Errorf("upshift_runs not registered: %d series, %v", n, err)
	}
	PluginCall("GetClusterStatus", nil) // a vector shows once it has a series
	if n, err := testutil.GatherAndCount(reg, "multicluster_clusterversion_success_plugin_call_total"); err != nil || n == 0 {
		t.Errorf("the fleet's counters are not registered: %d series, %v", n, err)
	}
}
