package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// resumeEverywhere stops a fresh run of the plan at every transition in
// turn, two ways: killed right after the save that holds it, and crashed
// at that save, which is lost while what had started finishes its IO (a
// backup landed, a step wrote). Each time a new process resumes as a
// driver does (Reconcile with the backups in the world, then Drive),
// going on or asked to roll back. Going on, it must end as the
// uninterrupted run does; either way it must run no succeeded step again
// nor any step against the plan's order, record no backup that holds its
// stage's changes, and, rolled back, leave no step's change in place.
func (s *scenario) resumeEverywhere(t *testing.T, d *datadriven.TestData) string {
	fails := func() map[string]bool {
		m := map[string]bool{}
		for _, arg := range d.CmdArgs {
			if arg.Key == "fail" {
				for _, v := range arg.Vals {
					m[v] = true
				}
			}
		}
		return m
	}
	var running []string
	for _, arg := range d.CmdArgs {
		if arg.Key == "running" {
			running = append(running, arg.Vals...)
		}
	}
	s.running = running
	// Start from a fresh run of the plan; the scenario's own saved run
	// and world are left as they were.
	saved, w := s.saved, s.world
	defer func() { s.saved, s.world, s.running = saved, w, nil }()
	s.world = newWorld()
	s.save(t, NewRun(s.plan, "sha256:plan", nil, s.now()))
	start := s.saved
	whole := s.newDrive()
	whole.fails = fails()
	if err := s.drive(s.load(t), whole); err != nil {
		t.Fatal(err)
	}
	want := s.load(t)
	bad := s.world.violations(want)
	first, total := s.loadFrom(t, start).Status.Transitions+1, want.Status.Transitions
	for n := first; n < total; n++ {
		for _, crash := range []bool{false, true} {
			for _, rollback := range []bool{false, true} {
				s.saved, s.world = start, newWorld()
				if err := s.stopAt(t, n, crash, fails()); err != nil {
					t.Fatal(err)
				}
				bad = append(bad, s.resume(t, stop{n, crash, rollback}, fails, want)...)
			}
		}
	}
	if len(bad) > 0 {
		return strings.Join(bad, "\n")
	}
	return fmt.Sprintf("killed after, and crashed at, each save of transitions %d..%d; every resumed run ended %s as the uninterrupted one, in the plan's order, with no backup holding its stage's changes; every one rolled back instead left nothing changed", first, total-1, want.Status.Phase)
}

// stop is where a run stopped, and whether an operator then asked for a
// rollback.
type stop struct {
	at              int
	crash, rollback bool
}

func (p stop) String() string {
	how := fmt.Sprintf("killed after %d", p.at)
	if p.crash {
		how = fmt.Sprintf("crashed at %d", p.at)
	}
	if p.rollback {
		how += ", then rolled back"
	}
	return how
}

// stopAt drives the saved run until it is killed after, or crashes at,
// the save of transition n.
func (s *scenario) stopAt(t *testing.T, n int, crash bool, fails map[string]bool) error {
	dr := s.newDrive()
	dr.fails = fails
	want := errKilled
	if crash {
		dr.crashAt, want = n, errCrashed
	} else {
		dr.killAt = n
	}
	if err := s.drive(s.load(t), dr); !errors.Is(err, want) {
		return fmt.Errorf("stop at %d (crash %t): %v", n, crash, err)
	}
	return nil
}

// resume drives the stopped run to its end as a new process and says
// where it differs from want (going on) or is not rolled back (asked
// to), or left the world unsafe.
func (s *scenario) resume(t *testing.T, p stop, fails func() map[string]bool, want *v1alpha1.UpgradeRun) []string {
	stopped := s.load(t)
	Reconcile(stopped, s.world.found(stopped), s.now())
	if p.rollback {
		if err := RequestRollback(stopped, "rollback requested by an operator", s.now()); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	// A failure injected into an action recorded as completed before
	// the stop is spent; the resumed process must not see it again. One
	// whose action ran but was not recorded (a gate started while its
	// Begin was being saved) fails again, as after a real crash.
	doneBefore := succeededSteps(stopped)
	var bad []string
	dr := s.newDrive()
	dr.fails = spent(fails(), stopped)
	dr.out = &strings.Builder{}
	if err := s.drive(stopped, dr); err != nil {
		t.Fatalf("%s: resume: %v", p, err)
	}
	for _, done := range doneBefore {
		if strings.Contains(dr.out.String(), " begin "+done+"\n") {
			bad = append(bad, fmt.Sprintf("%s: succeeded %s ran again", p, done))
		}
	}
	got := s.load(t)
	switch {
	case p.rollback:
		if ph := got.Status.Phase; ph != v1alpha1.RunRolledBack && ph != v1alpha1.RunRollbackFailed {
			bad = append(bad, fmt.Sprintf("%s: the run ended %s", p, ph))
		}
	case render(got) != render(want):
		bad = append(bad, fmt.Sprintf("%s:\n%s", p, diffLines(render(want), render(got))))
	}
	for _, v := range s.world.violations(got) {
		bad = append(bad, fmt.Sprintf("%s: %s", p, v))
	}
	return bad
}

// succeededSteps are the keys of the steps and gates recorded as succeeded.
func succeededSteps(r *v1alpha1.UpgradeRun) []string {
	var keys []string
	for i, ss := range r.Status.Stages {
		for _, st := range ss.Steps {
			if st.Phase == v1alpha1.PhaseSucceeded {
				keys = append(keys, "step:"+st.Name)
			}
		}
		for j, g := range ss.Gates {
			if g.Phase == v1alpha1.PhaseSucceeded {
				keys = append(keys, fmt.Sprintf("gate:%s/%d", r.Spec.Plan.Stages[i].Name, j))
			}
		}
	}
	return keys
}

// spent drops failures whose action was already recorded as failed.
func spent(f map[string]bool, r *v1alpha1.UpgradeRun) map[string]bool {
	for i, ss := range r.Status.Stages {
		if ss.Backup == nil && ss.Phase == v1alpha1.PhaseFailed {
			delete(f, "backup:"+ss.Name)
		}
		if ss.Phase == v1alpha1.PhaseRollbackErr {
			delete(f, "restore:"+ss.Name)
		}
		for _, st := range ss.Steps {
			if st.Phase == v1alpha1.PhaseFailed || st.Attempts > 0 && st.FinishedAt != nil {
				delete(f, "step:"+st.Name)
			}
		}
		for j, g := range ss.Gates {
			if g.FinishedAt != nil {
				delete(f, fmt.Sprintf("gate:%s/%d", r.Spec.Plan.Stages[i].Name, j))
			}
		}
	}
	return f
}

func (s *scenario) loadFrom(t *testing.T, b []byte) *v1alpha1.UpgradeRun {
	var r v1alpha1.UpgradeRun
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}
