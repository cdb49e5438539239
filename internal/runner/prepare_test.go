package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// fakeRecords is a run store in memory that logs every call, so a test
// can tell what apply wrote, and in which order.
type fakeRecords struct {
	runs        map[string]*v1alpha1.UpgradeRun
	listErr     error
	sourcesErr  error
	calls       []string
	savedSource map[string][]byte
	savedPlan   *v1alpha1.UpgradePlanSpec
}

var _ records = (*fakeRecords)(nil)

func (f *fakeRecords) List(context.Context) ([]v1alpha1.UpgradeRun, error) {
	f.calls = append(f.calls, "list")
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []v1alpha1.UpgradeRun
	for _, r := range f.runs {
		out = append(out, *r)
	}
	return out, nil
}

func (f *fakeRecords) Create(_ context.Context, r *v1alpha1.UpgradeRun) error {
	f.calls = append(f.calls, "create")
	cp := *r
	f.runs[r.Name] = &cp
	return nil
}

func (f *fakeRecords) Save(_ context.Context, r *v1alpha1.UpgradeRun) error {
	f.calls = append(f.calls, "save")
	cp := *r
	f.runs[r.Name] = &cp
	return nil
}

func (f *fakeRecords) SavePackedSources(_ context.Context, name string, p *runstore.PackedSources) (v1alpha1.BlobRef, error) {
	f.calls = append(f.calls, "save-sources")
	if f.sourcesErr != nil {
		return v1alpha1.BlobRef{}, f.sourcesErr
	}
	f.savedSource, f.savedPlan = p.Sources, &p.Plan
	return v1alpha1.BlobRef{Secrets: []string{"upshift-src-" + name + "-0"}, SHA256: "abc"}, nil
}

func (f *fakeRecords) writes() string {
	var w []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "save") || c == "create" {
			w = append(w, c)
		}
	}
	return strings.Join(w, " ")
}

// resolved is plan "demo" with one manifests step whose source has the
// given content, and a Helm step with a secret value.
func resolved(t *testing.T, content string) *resolve.Plan {
	t.Helper()
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Spec: v1alpha1.UpgradePlanSpec{Version: "1.1.0", Stages: []v1alpha1.Stage{{
		Name: "config", Steps: []v1alpha1.Step{
			{Name: "settings", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Path: "m.yaml"}}},
			{Name: "addon", Helm: &v1alpha1.HelmStep{Release: "addon", Namespace: "n", Chart: "addon", Values: &apiextensionsv1.JSON{Raw: []byte(`{"password":"hunter2"}`)}}},
		},
	}}}}
	r, err := resolve.FromSources(p, map[string][]byte{resolve.SourcePath(0, 0, p.Spec.Stages[0].Steps[0]): []byte(content)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// saved is a run of p as apply would have saved it, in phase, and as the
// store reads it back: its plan redacted.
func saved(p *resolve.Plan, phase v1alpha1.RunPhase) *v1alpha1.UpgradeRun {
	r := engine.NewRun(p.Plan, p.Digest, p.SourceDigests, time.Now())
	r.Status.Phase = phase
	r.Spec.Plan = redact.PlanSpec(r.Spec.Plan)
	return r
}

// unstarted is a run of p created but whose status was never written (the
// process stopped between the two writes), as the store reads it.
func unstarted(p *resolve.Plan) *v1alpha1.UpgradeRun {
	r := saved(p, v1alpha1.RunPending)
	r.Status = v1alpha1.RunStatus{Phase: v1alpha1.RunPending}
	return r
}

// What apply does with each saved state: start, resume, refuse, report,
// start a new attempt; and what it writes for each (nothing, for all but
// start, resume and new attempt).
func TestPrepareDecidesFromTheSavedRun(t *testing.T) {
	plan := resolved(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: n}\n")
	changed := resolved(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: n}\ndata: {x: y}\n")
	other := func(phase v1alpha1.RunPhase) *v1alpha1.UpgradeRun {
		r := saved(plan, phase)
		r.Name = "other"
		r.Status.FinishedAt = &metav1.MicroTime{Time: time.Now()}
		return r
	}
	tests := []struct {
		name       string
		runs       []*v1alpha1.UpgradeRun
		plan       *resolve.Plan
		retry      bool
		abortHolds bool // as Resume asks
		listErr    error
		sourcesErr error
		verdict    engine.Verdict
		drive      bool
		writes     string
		errHas     string
		attempt    int
		from       string // the new record's spec.fromVersion
	}{
		{name: "no run yet: sources first, then the record", plan: plan, verdict: engine.StartRun, drive: true, writes: "save-sources create", attempt: 1},
		{name: "sources cannot be written: no record", plan: plan, sourcesErr: errors.New("etcd is sad"), writes: "save-sources", errHas: "nothing was changed"},
		{name: "unfinished, same plan: resume, write nothing yet", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunRunning)}, plan: plan, verdict: engine.ResumeRun, drive: true, attempt: 1},
		{name: "created, its status never written: start it", runs: []*v1alpha1.UpgradeRun{unstarted(plan)}, plan: plan, verdict: engine.ResumeRun, drive: true, writes: "save", attempt: 1},
		{name: "aborted: resume", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunAborted)}, plan: plan, verdict: engine.ResumeRun, drive: true, attempt: 1},
		{name: "aborted, resumed by an upgrade: refuse without a retry", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunAborted)}, plan: plan, abortHolds: true, verdict: engine.Refuse, errHas: "only a retry resumes it"},
		{name: "aborted, resumed by an upgrade's retry: resume", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunAborted)}, plan: plan, abortHolds: true, retry: true, verdict: engine.ResumeRun, drive: true, attempt: 1},
		{name: "running, resumed by an upgrade: resume", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunRunning)}, plan: plan, abortHolds: true, verdict: engine.ResumeRun, drive: true, attempt: 1},
		{name: "unfinished, plan changed: refuse", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunRunning)}, plan: changed, verdict: engine.Refuse, errHas: "content changed"},
		{name: "succeeded, same plan: nothing to do", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunSucceeded)}, plan: plan, verdict: engine.AlreadyDone},
		{name: "succeeded, other content: refuse", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunSucceeded)}, plan: changed, verdict: engine.Refuse, errHas: "new metadata.name"},
		{name: "rolled back: report", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunRolledBack)}, plan: plan, verdict: engine.ReportFailed},
		{name: "rolled back, --retry: a new attempt", runs: []*v1alpha1.UpgradeRun{saved(plan, v1alpha1.RunRolledBack)}, plan: plan, retry: true, verdict: engine.StartAttempt, drive: true, writes: "save", attempt: 2},
		{name: "another run unfinished: refuse", runs: []*v1alpha1.UpgradeRun{other(v1alpha1.RunFailed)}, plan: plan, verdict: engine.Refuse, errHas: "run other is unfinished"},
		{name: "another run finished: start", runs: []*v1alpha1.UpgradeRun{other(v1alpha1.RunSucceeded)}, plan: plan, verdict: engine.StartRun, drive: true, writes: "save-sources create", attempt: 1, from: "1.1.0"},
		{name: "runs cannot be listed: stop, write nothing", plan: plan, listErr: errors.New("list runs: etcd is sad"), errHas: "etcd is sad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRecords{runs: map[string]*v1alpha1.UpgradeRun{}, listErr: tt.listErr, sourcesErr: tt.sourcesErr}
			for _, r := range tt.runs {
				f.runs[r.Name] = r
			}
			out, drive, err := prepare(context.Background(), f, tt.plan, nil, applyMode{retry: tt.retry, abortHolds: tt.abortHolds}, func(string) {}, nil)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err = %v, want one saying %q", err, tt.errHas)
				}
				if tt.verdict == engine.Refuse && !errors.Is(err, ErrRefused) {
					t.Errorf("a refusal must wrap ErrRefused (exit 1): %v", err)
				}
				if tt.abortHolds && !errors.Is(err, ErrAbortedRun) {
					t.Errorf("an aborted run held must wrap ErrAbortedRun (the upgrade names it): %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := f.writes(); got != tt.writes {
				t.Errorf("writes %q, want %q", got, tt.writes)
			}
			if drive != tt.drive {
				t.Errorf("drive = %v, want %v", drive, tt.drive)
			}
			if tt.verdict != "" && (out == nil || out.Decision.Verdict != tt.verdict) {
				t.Fatalf("verdict %+v, want %s", out, tt.verdict)
			}
			if tt.attempt != 0 {
				if out.Run.Status.Attempt != tt.attempt || out.Run.Status.Phase != v1alpha1.RunRunning {
					t.Errorf("run attempt %d phase %s, want attempt %d Running", out.Run.Status.Attempt, out.Run.Status.Phase, tt.attempt)
				}
			}
			if tt.drive {
				// What drives the run is the plan as written, never the
				// record's redacted copy.
				if got := string(mustJSON(t, out.Run.Spec.Plan)); got != string(mustJSON(t, tt.plan.Plan.Spec)) {
					t.Errorf("the run is driven with plan %s, want the plan as written %s", got, mustJSON(t, tt.plan.Plan.Spec))
				}
				if len(out.Run.Status.Stages) != 1 || len(out.Run.Status.Stages[0].Steps) != 2 {
					t.Errorf("the driven run's stages: %+v", out.Run.Status.Stages)
				}
			}
			if tt.verdict == engine.StartRun {
				if f.savedPlan == nil || !strings.Contains(string(mustJSON(t, f.savedPlan)), "hunter2") {
					t.Errorf("SaveSources got plan %s, want the plan as written", mustJSON(t, f.savedPlan))
				}
				if r := f.runs["demo"]; r.Spec.Sources == nil || r.Spec.Sources.Secrets[0] != "upshift-src-demo-0" {
					t.Errorf("the new record does not name its sources: %+v", r.Spec.Sources)
				}
				if got := f.runs["demo"].Spec.FromVersion; got != tt.from {
					t.Errorf("the new record starts from version %q, want %q (the last succeeded run's)", got, tt.from)
				}
				if len(f.savedSource) != 1 {
					t.Errorf("saved %d sources, want the plan's 1", len(f.savedSource))
				}
			}
		})
	}
}

// serviceAccountName and suspend are the controller's settings: setting
// them leaves the plan's digest alone (a run resumes), while any change of
// what the plan does changes it.
func TestDriverSettingsAreNoChangeOfContent(t *testing.T) {
	digest := func(edit func(*v1alpha1.UpgradePlanSpec)) string {
		t.Helper()
		p := resolved(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: n}\n").Plan
		edit(&p.Spec)
		r, err := resolve.FromSources(p, map[string][]byte{resolve.SourcePath(0, 0, p.Spec.Stages[0].Steps[0]): []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: n}\n")})
		if err != nil {
			t.Fatal(err)
		}
		return r.Digest
	}
	plain := digest(func(*v1alpha1.UpgradePlanSpec) {})
	if d := digest(func(s *v1alpha1.UpgradePlanSpec) { s.ServiceAccountName, s.Suspend = "upgrader", true }); d != plain {
		t.Errorf("setting serviceAccountName and suspend changed the digest: %s, was %s", d, plain)
	}
	if d := digest(func(s *v1alpha1.UpgradePlanSpec) { s.Version = "1.2.0" }); d == plain {
		t.Error("changing spec.version left the digest as it was")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChecksRunWhenARunStartsOnly: a failing health check refuses a new
// run, a new attempt or a run created but never started before anything
// is written; a resumed run is not checked again (the cluster is
// mid-upgrade, its health is the stages').
func TestChecksRunWhenARunStartsOnly(t *testing.T) {
	plan := resolved(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: n}\n")
	failing := func(context.Context) ([]v1alpha1.StepStatus, error) {
		return nil, fmt.Errorf("%w: node n1 is not Ready", ErrChecksFailed)
	}
	for _, tt := range []struct {
		name    string
		saved   *v1alpha1.UpgradeRun
		retry   bool
		checked bool
	}{
		{name: "a new run", checked: true},
		{name: "a new attempt", saved: saved(plan, v1alpha1.RunRolledBack), retry: true, checked: true},
		{name: "a resumed run", saved: saved(plan, v1alpha1.RunRunning)},
		// Created, stopped before its first status: it starts now.
		{name: "a run that never started", saved: unstarted(plan), checked: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRecords{runs: map[string]*v1alpha1.UpgradeRun{}}
			if tt.saved != nil {
				f.runs[tt.saved.Name] = tt.saved
			}
			called := false
			_, drive, err := prepare(context.Background(), f, plan, nil, applyMode{retry: tt.retry}, func(string) {}, func(ctx context.Context) ([]v1alpha1.StepStatus, error) { called = true; return failing(ctx) })
			if called != tt.checked {
				t.Fatalf("checks called %v, want %v", called, tt.checked)
			}
			if tt.checked {
				if !errors.Is(err, ErrChecksFailed) || !errors.Is(err, ErrRefused) || drive || f.writes() != "" {
					t.Errorf("err %v, drive %v, writes %q; want a refusal and nothing written", err, drive, f.writes())
				}
			} else if err != nil || !drive {
				t.Errorf("err %v, drive %v; want the run resumed", err, drive)
			}
		})
	}
}

// A run created and stopped before its first status was saved starts
// with the checks run now, and records them with that first status.
func TestAnUnstartedRunRecordsTheChecksItStartsWith(t *testing.T) {
	plan := resolved(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: n}\n")
	f := &fakeRecords{runs: map[string]*v1alpha1.UpgradeRun{"demo": unstarted(plan)}}
	passed := []v1alpha1.StepStatus{{Name: "nodes", Phase: v1alpha1.PhaseSucceeded}}
	out, drive, err := prepare(context.Background(), f, plan, nil, applyMode{}, func(string) {}, func(context.Context) ([]v1alpha1.StepStatus, error) { return passed, nil })
	if err != nil || !drive {
		t.Fatalf("err %v, drive %v; want the run started", err, drive)
	}
	if got := f.runs["demo"].Status; got.Attempt != 1 || len(got.Checks) != 1 || got.Checks[0].Name != "nodes" {
		t.Errorf("saved status attempt %d checks %+v; want attempt 1 with the checks it started with", got.Attempt, got.Checks)
	}
	if out.Run.Status.Attempt != 1 {
		t.Errorf("driven run attempt %d, want 1", out.Run.Status.Attempt)
	}
}
