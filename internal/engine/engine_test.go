package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// TestScenarios runs the scripts in testdata. Rewrite the expected output
// after an intended change with: go test ./internal/engine -rewrite
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{}
		datadriven.RunTest(t, path, s.handle)
	})
}

// scenario is one script's world: the plan, the saved run (as JSON, the
// way a store holds it) and the outcomes the fake actor will report.
type scenario struct {
	plan  *v1alpha1.UpgradePlan
	saved []byte
	clock time.Time
}

var errKilled = errors.New("killed after saving")

func (s *scenario) handle(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "plan":
		s.plan = parsePlan(t, d)
		s.clock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		r := NewRun(s.plan, "sha256:plan", nil, s.now())
		s.save(t, r)
		return "ok"
	case "run":
		return s.run(t, d)
	case "status":
		return render(s.load(t))
	case "rollback", "retry", "abort", "resume", "new-attempt":
		r := s.load(t)
		var err error
		switch d.Cmd {
		case "rollback":
			err = RequestRollback(r, "rollback requested by an operator", s.now())
		case "retry":
			err = Retry(r)
		case "abort":
			err = Abort(r, "an operator", s.now())
		case "resume":
			Resume(r)
		case "new-attempt":
			err = NewAttempt(r, s.now())
		}
		if err != nil {
			return "error: " + err.Error()
		}
		s.save(t, r)
		return fmt.Sprintf("phase %s", r.Status.Phase)
	case "apply":
		return s.apply(t, d)
	case "approve":
		return s.approve(t, d)
	case "resume-at-every-transition":
		return s.resumeEverywhere(t, d)
	}
	t.Fatalf("unknown command %q", d.Cmd)
	return ""
}

func (s *scenario) now() time.Time { s.clock = s.clock.Add(time.Second); return s.clock }

func (s *scenario) save(t *testing.T, r *v1alpha1.UpgradeRun) {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	s.saved = b
}

func (s *scenario) load(t *testing.T) *v1alpha1.UpgradeRun {
	var r v1alpha1.UpgradeRun
	if err := json.Unmarshal(s.saved, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// apply decides what `upshift apply` does with the saved run, for a plan
// whose sources have the given digests (source=PATH:DIGEST,…), optionally
// with --retry and with another run unfinished (other=PHASE).
func (s *scenario) apply(t *testing.T, d *datadriven.TestData) string {
	sources := map[string]string{}
	var retry bool
	var others []v1alpha1.UpgradeRun
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "source":
			for _, v := range arg.Vals {
				p, dg, _ := strings.Cut(v, ":")
				sources[p] = dg
			}
		case "retry":
			retry = true
		case "other":
			o := v1alpha1.UpgradeRun{}
			o.Name, o.Status.Phase = "other", v1alpha1.RunPhase(arg.Vals[0])
			others = append(others, o)
		}
	}
	r := s.load(t)
	r.Spec.SourceDigests = map[string]string{"spec.stages[0].steps[0].crds": "a", "spec.stages[1].steps[0].manifests": "b"}
	digest := r.Spec.PlanDigest
	if len(sources) > 0 {
		digest = "sha256:changed"
	}
	dec := DecideApply(r, others, digest, sources, retry)
	out := fmt.Sprintf("%s: %s", dec.Verdict, dec.Reason)
	if dec.Next != "" {
		out += fmt.Sprintf("\nnext: %s %s", dec.Next, dec.Run)
	}
	return out
}

// approve records an operator's approval of the saved run, of the step
// the run waits at or of step=NAME, and says what Approve did.
func (s *scenario) approve(t *testing.T, d *datadriven.TestData) string {
	var step string
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "step":
			step = arg.Vals[0]
		default:
			t.Fatalf("approve: unknown argument %s", arg.Key)
		}
	}
	r := s.load(t)
	a, err := Approve(r, step, "alice@laptop", s.now())
	var refused *ApprovalRefused
	switch {
	case errors.As(err, &refused):
		if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("a refused approval does not wrap ErrNotAllowed: %v", err)
		}
		return fmt.Sprintf("refused (%s): %v", refused.Reason, err)
	case err != nil:
		t.Fatalf("approve: %v", err)
	}
	s.save(t, r)
	if a.Ahead {
		return fmt.Sprintf("approved %s ahead: the run will not stop there", a.Step)
	}
	return fmt.Sprintf("approved %s, where the run waits", a.Step)
}

// run drives the saved run with a fake actor. Arguments:
//
//	fail=ACTION,…   ACTION is backup:STAGE, step:STEP, gate:STAGE/INDEX or
//	                restore:STAGE; each fails once
//	logs=ACTION,…   the failure's message goes on with a container's last
//	                log lines, as a crashing pod's does
//	kill=N          the process dies right after saving transition N
//	lose-lease=N    the lease is lost during the action begun at transition N
//	wait=ACTION,…   the action stops the run to wait (an approval with
//	                apply --no-wait): the drive ends, the step Running
func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	var out strings.Builder
	fails, slow, waits, logs := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	killAt, loseAt := -1, -1
	quiet := false
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "quiet": // graph stages: the order of lines is not fixed
			quiet = true
		case "slow":
			for _, v := range arg.Vals {
				slow[v] = true
			}
		case "fail":
			for _, v := range arg.Vals {
				fails[v] = true
			}
		case "wait":
			for _, v := range arg.Vals {
				waits[v] = true
			}
		case "logs":
			for _, v := range arg.Vals {
				logs[v] = true
			}
		case "kill":
			killAt = atoi(t, arg.Vals[0])
		case "lose-lease":
			loseAt = atoi(t, arg.Vals[0])
		default:
			t.Fatalf("run: unknown argument %s", arg.Key)
		}
	}
	r := s.load(t)
	lines := &out
	if quiet {
		lines = nil
	}
	err := s.driveWith(r, fails, slow, waits, logs, killAt, loseAt, lines)
	switch {
	case errors.Is(err, errKilled):
		fmt.Fprintf(&out, "killed after saving transitions up to %d\n", s.load(t).Status.Transitions)
	case err != nil:
		fmt.Fprintf(&out, "stopped: %v\n", err)
	default:
		fmt.Fprintf(&out, "=> %s: %s\n", r.Status.Phase, r.Status.Message)
	}
	return out.String()
}

func (s *scenario) drive(r *v1alpha1.UpgradeRun, fails map[string]bool, killAt, loseAt int, out *strings.Builder) error {
	return s.driveWith(r, fails, nil, nil, nil, killAt, loseAt, out)
}

// driveWith is drive where the actions in slow run until they are
// cancelled (a branch still working when its sibling fails), those in
// waits stop the run to wait, and the failures of those in logs go on
// with log lines.
func (s *scenario) driveWith(r *v1alpha1.UpgradeRun, fails, slow, waits, logs map[string]bool, killAt, loseAt int, out *strings.Builder) error {
	var mu sync.Mutex // graph stages act side by side
	actor := actorFunc(func(ctx context.Context, r *v1alpha1.UpgradeRun, a Action) (Outcome, error) {
		if r.Status.Transitions == loseAt {
			return Outcome{}, errors.New("lease lost")
		}
		key := actionKey(r, a)
		mu.Lock()
		fail := fails[key]
		delete(fails, key)
		mu.Unlock()
		if waits[key] {
			return Outcome{}, errors.New("waiting for approval")
		}
		if slow[key] {
			<-ctx.Done() // runs until stopped
			return Outcome{}, context.Cause(ctx)
		}
		if fail {
			o := Outcome{Message: "injected failure of " + key}
			if logs[key] {
				o.Message += "\nlast log lines of pod demo/x-1 container x:\n  panic: injected"
			}
			if a.Kind == Restore {
				o.Rollback = &v1alpha1.Rollback{Differences: []string{"deployment demo/x: spec.replicas was 2 is 3"}}
			}
			return o, nil
		}
		switch a.Kind {
		case Backup:
			objects := 1
			if strings.HasPrefix(r.Spec.Plan.Stages[a.Stage].Name, "hold") {
				objects = 0 // a stage of approvals and pauses touches nothing
			}
			return Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b-" + key}, Objects: objects}}, nil
		case Restore:
			return Outcome{OK: true, Rollback: &v1alpha1.Rollback{Restored: 1}}, nil
		}
		return Outcome{OK: true, Message: "done"}, nil
	})
	saver := saverFunc(func(_ context.Context, r *v1alpha1.UpgradeRun) error {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		s.saved = b
		// Kill at the first save that holds transition killAt: a
		// transition is saved together with the ones that follow it
		// before any IO.
		if killAt > 0 && r.Status.Transitions >= killAt {
			return errKilled
		}
		return nil
	})
	drv := &Driver{Actor: actor, Saver: saver, Now: s.now, Observe: func(e Event) {
		if out == nil {
			return
		}
		if e.Begin {
			fmt.Fprintf(out, "%d begin %s\n", e.Run.Status.Transitions, actionKey(e.Run, e.Action))
			return
		}
		verdict := "ok"
		if !e.Outcome.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(out, "%d %s %s -> run %s\n", e.Run.Status.Transitions, verdict, actionKey(e.Run, e.Action), e.Run.Status.Phase)
	}}
	return drv.Drive(context.Background(), r)
}

// resumeEverywhere kills the run after each transition in turn, resumes
// it, and checks it ends exactly as an uninterrupted run does.
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
	// Start from a fresh run of the plan; the scenario's own saved run
	// is left as it was.
	before := s.saved
	defer func() { s.saved = before }()
	s.save(t, NewRun(s.plan, "sha256:plan", nil, s.now()))
	start := s.saved
	if err := s.drive(s.load(t), fails(), -1, -1, nil); err != nil {
		t.Fatal(err)
	}
	want := s.load(t)
	total := want.Status.Transitions
	var bad []string
	for n := s.loadFrom(t, start).Status.Transitions + 1; n < total; n++ {
		s.saved = start
		f := fails()
		if err := s.drive(s.load(t), f, n, -1, nil); !errors.Is(err, errKilled) {
			t.Fatalf("kill at %d: %v", n, err)
		}
		killed := s.load(t)
		// A failure injected into an action recorded as completed before
		// the kill is spent; the resumed process must not see it again.
		// One whose action ran but was not recorded (a gate started while
		// its Begin was being saved) fails again, as after a real crash.
		doneBefore := succeededSteps(killed)
		var resumed strings.Builder
		if err := s.drive(killed, spent(fails(), killed), -1, -1, &resumed); err != nil {
			t.Fatal(err)
		}
		for _, done := range doneBefore {
			if strings.Contains(resumed.String(), " begin "+done+"\n") {
				bad = append(bad, fmt.Sprintf("kill after %d: succeeded %s ran again", n, done))
			}
		}
		got := s.load(t)
		if g, w := render(got), render(want); g != w {
			bad = append(bad, fmt.Sprintf("kill after %d:\n%s", n, diffLines(w, g)))
		}
	}
	if len(bad) > 0 {
		return strings.Join(bad, "\n")
	}
	return fmt.Sprintf("killed after each of transitions %d..%d; every resumed run ended %s as the uninterrupted one", s.loadFrom(t, start).Status.Transitions+1, total-1, want.Status.Phase)
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

func actionKey(r *v1alpha1.UpgradeRun, a Action) string {
	stage := r.Spec.Plan.Stages[a.Stage]
	switch a.Kind {
	case RunStep:
		return "step:" + stage.Steps[a.Index].Name
	case CheckGate:
		return fmt.Sprintf("gate:%s/%d", stage.Name, a.Index)
	}
	return string(a.Kind) + ":" + stage.Name
}

// render prints a run's status without times, which differ between runs.
func render(r *v1alpha1.UpgradeRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s attempt %d: %s", r.Name, r.Status.Attempt, r.Status.Phase)
	if r.Status.Stage != "" {
		fmt.Fprintf(&b, " at %s/%s", r.Status.Stage, r.Status.Step)
	}
	if r.Status.Message != "" {
		fmt.Fprintf(&b, " (%s)", r.Status.Message)
	}
	b.WriteString("\n")
	for _, ss := range r.Status.Stages {
		fmt.Fprintf(&b, "  stage %s: %s", ss.Name, ss.Phase)
		if ss.Backup != nil {
			fmt.Fprintf(&b, " backup=%s", strings.Join(ss.Backup.Secrets, ","))
		}
		if ss.Message != "" {
			fmt.Fprintf(&b, " (%s)", ss.Message)
		}
		if ss.Rollback != nil && len(ss.Rollback.Differences) > 0 {
			fmt.Fprintf(&b, " differences=%q", ss.Rollback.Differences)
		}
		b.WriteString("\n")
		for _, st := range ss.Steps {
			cancelled := ""
			if strings.HasPrefix(st.Message, "cancelled") {
				cancelled = " (cancelled)"
			}
			fmt.Fprintf(&b, "    step %s: %s%s\n", st.Name, st.Phase, cancelled)
		}
		for _, g := range ss.Gates {
			fmt.Fprintf(&b, "    gate %s: %s\n", g.Name, g.Phase)
		}
	}
	return b.String()
}

// parsePlan reads "stage NAME steps=a,b approvals=c gates=N" lines.
func parsePlan(t *testing.T, d *datadriven.TestData) *v1alpha1.UpgradePlan {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	p.Spec.Version = "1.1.0"
	for _, arg := range d.CmdArgs {
		if arg.Key == "autoRollback" {
			v := arg.Vals[0] == "true"
			p.Spec.AutoRollback = &v
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "stage" {
			t.Fatalf("plan: want `stage NAME steps=a,b gates=N`, got %q", line)
		}
		st := v1alpha1.Stage{Name: f[1]}
		for _, kv := range f[2:] {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "steps":
				for _, n := range strings.Split(v, ",") {
					st.Steps = append(st.Steps, v1alpha1.Step{Name: n})
				}
			case "approvals": // approval steps, after the steps= ones
				for _, n := range strings.Split(v, ",") {
					st.Steps = append(st.Steps, v1alpha1.Step{Name: n, Approval: &v1alpha1.ApprovalStep{}})
				}
			case "after": // after=b:a+c  step b depends on a and c
				for _, dep := range strings.Split(strings.Trim(v, "()"), ",") {
					step, on, _ := strings.Cut(dep, ":")
					for j := range st.Steps {
						if st.Steps[j].Name == step {
							st.Steps[j].DependsOn = strings.Split(on, "+")
						}
					}
				}
			case "gates":
				for i := 0; i < atoi(t, v); i++ {
					st.Gates = append(st.Gates, v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: fmt.Sprintf("http://127.0.0.1/%s/%d", st.Name, i)}})
				}
			case "warning-gates", "info-gates":
				sev := v1alpha1.SeverityWarning
				if k == "info-gates" {
					sev = v1alpha1.SeverityInfo
				}
				for i := 0; i < atoi(t, v); i++ {
					st.Gates = append(st.Gates, v1alpha1.Gate{Severity: sev, HTTP: &v1alpha1.HTTPGate{URL: fmt.Sprintf("http://127.0.0.1/%s/%s/%d", st.Name, sev, i)}})
				}
			}
		}
		p.Spec.Stages = append(p.Spec.Stages, st)
	}
	return p
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "  want: %s\n  got:  %s\n", wl, gl)
		}
	}
	return b.String()
}

type actorFunc func(context.Context, *v1alpha1.UpgradeRun, Action) (Outcome, error)

func (f actorFunc) Act(ctx context.Context, r *v1alpha1.UpgradeRun, a Action) (Outcome, error) {
	return f(ctx, r, a)
}

type saverFunc func(context.Context, *v1alpha1.UpgradeRun) error

func (f saverFunc) Save(ctx context.Context, r *v1alpha1.UpgradeRun) error { return f(ctx, r) }

var (
	_ Actor = actorFunc(nil)
	_ Saver = saverFunc(nil)
)
