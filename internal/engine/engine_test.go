package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	world *world // the cluster: outlives a killed process
	// running: the steps that say they are still running, in every drive
	// of resume-at-every-transition.
	running []string
}

var errKilled = errors.New("killed after saving")

func (s *scenario) handle(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "plan":
		s.plan = parsePlan(t, d)
		s.clock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		s.world = newWorld()
		r := NewRun(s.plan, "sha256:plan", nil, s.now())
		s.save(t, r)
		return "ok"
	case "run":
		return s.run(t, d)
	case "status":
		return render(s.load(t))
	case "rollback", "retry", "abort", "resume", "new-attempt":
		r := s.load(t)
		found := s.reconcile(r) // as a driver does before a command
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
		return found + fmt.Sprintf("phase %s", r.Status.Phase)
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
