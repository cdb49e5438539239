package runstore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// A save after a transition sends, as a JSON patch of the status
// subresource, the status fields and the stages that changed, never the
// plan: the record's writes stay small however big the plan is. The first
// save sends the whole status once, after the resource.
func TestSaveSendsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	c := testenv.Cluster(t)
	testenv.InstallCRDs(t, c.RESTConfig())
	var mu sync.Mutex
	var writes []string // "METHOD path: body"
	cfg := c.RESTConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet && r.GetBody != nil && strings.Contains(r.URL.Path, "/"+Resource) {
				if b, err := r.GetBody(); err == nil {
					body, _ := io.ReadAll(b)
					mu.Lock()
					writes = append(writes, r.Method+" "+r.URL.Path+": "+string(body))
					mu.Unlock()
				}
			}
			return rt.RoundTrip(r)
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := mustNew(t, cfg, testNamespace(t))
	if err := s.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	run := newRun("big-plan", "1.0.0", time.Now())
	// A plan of 31 stages with long messages in its spec.
	for i := 0; i < 30; i++ {
		run.Spec.Plan.Stages = append(run.Spec.Plan.Stages, v1alpha1.Stage{Name: fmt.Sprintf("stage-%d", i),
			Steps: []v1alpha1.Step{{Name: fmt.Sprintf("s-%d", i), Approval: &v1alpha1.ApprovalStep{Message: strings.Repeat("read the runbook first. ", 20)}}}})
		run.Status.Stages = append(run.Status.Stages, v1alpha1.StageStatus{Name: fmt.Sprintf("stage-%d", i), Phase: v1alpha1.PhasePending})
	}
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		run.Status.Transitions++
		run.Status.Stages[i].Phase = v1alpha1.PhaseSucceeded
		if err := s.Save(ctx, run); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	mu.Lock()
	sent := append([]string(nil), writes...)
	mu.Unlock()
	if len(sent) != 5 {
		t.Fatalf("%d writes, want the create, its status and 3 status patches:\n%s", len(sent), strings.Join(sent, "\n"))
	}
	if !strings.HasPrefix(sent[0], "POST ") || !strings.Contains(sent[0], "read the runbook first") || strings.Contains(sent[0], `"status":{"`) {
		t.Errorf("the first write is not the create of the resource without status: %.200s", sent[0])
	}
	if !strings.HasPrefix(sent[1], "PATCH ") || !strings.HasSuffix(strings.SplitN(sent[1], ":", 2)[0], "/status") || !strings.Contains(sent[1], `"path":"/status"`) {
		t.Errorf("the second write is not the whole status: %.200s", sent[1])
	}
	for i, p := range sent[2:] {
		path := strings.SplitN(p, ":", 2)[0]
		if !strings.HasSuffix(path, "/big-plan/status") || strings.Contains(p, "runbook") || len(p) > 1024 ||
			!strings.Contains(p, fmt.Sprintf(`"/status/stages/%d/`, i)) || strings.Contains(p, `"/status/stages/29"`) {
			t.Errorf("save %d sent %d bytes to %s; want the status fields and stage %d only:\n%s", i, len(p), path, i, p)
		}
	}
	// Read back whole, and a copy read elsewhere saves whole again.
	got, err := s.Get(ctx, "big-plan")
	if err != nil || len(got.Status.Stages) != len(run.Status.Stages) || got.Status.Stages[2].Phase != v1alpha1.PhaseSucceeded || got.Status.Transitions != run.Status.Transitions {
		t.Fatalf("Get after partial saves: %v; %d stages, stage 2 %s, transitions %d (want %d)", err, len(got.Status.Stages), got.Status.Stages[2].Phase, got.Status.Transitions, run.Status.Transitions)
	}
	other := mustNew(t, c.RESTConfig(), s.Namespace())
	got.Status.Message = "from another process"
	if err := other.Save(ctx, got); err != nil {
		t.Fatalf("save by another Store: %v", err)
	}
	if again, err := s.Get(ctx, "big-plan"); err != nil || again.Status.Message != "from another process" || len(again.Status.Stages) != len(run.Status.Stages) {
		t.Fatalf("Get after another Store's save: %v", err)
	}
	// The run this Store wrote last is stale now: a conflict, not a lost
	// update.
	run.Status.Transitions++
	if err := s.Save(ctx, run); err == nil || !strings.Contains(err.Error(), ErrConflict.Error()) {
		t.Fatalf("save of a stale run = %v, want ErrConflict", err)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
