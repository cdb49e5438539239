package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// fakeWatch is a Watch with scripted answers.
type fakeWatch struct {
	ended map[string]pluginsdk.OperationReport
	quiet map[string]bool
}

func (f *fakeWatch) Ended(_, op string) (pluginsdk.OperationReport, bool) {
	r, ok := f.ended[op]
	delete(f.ended, op)
	return r, ok
}

func (f *fakeWatch) Quiet(_, op string, _ time.Time) bool { return f.quiet[op] }

// An operation the driver waits on is not asked about while its wait
// runs, and its end, seen by the wait, is taken in without asking: a
// step costs plugin calls for what changed, not for every operation in
// flight.
func TestStepAsksTheWatchBeforeThePlugin(t *testing.T) {
	ctx := context.Background()
	w := newWorld([]string{"a", "b", "c"}, "1.30")
	sp, err := Compile(v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 2, Clusters: []v1alpha1.FleetCluster{
		{ID: "a", Version: "1.31"}, {ID: "b", Version: "1.31"}, {ID: "c", Version: "1.31"}}})
	if err != nil {
		t.Fatal(err)
	}
	watch := &fakeWatch{ended: map[string]pluginsdk.OperationReport{}, quiet: map[string]bool{}}
	in := Inputs{Generation: 1, Now: time.Now, Watch: watch}
	st := v1alpha1.ClusterVersionStatus{}
	for i := 0; i < 6; i++ { // until a's service out is in flight
		res, err := Step(ctx, w, sp, st, in)
		if err != nil {
			t.Fatal(err)
		}
		st = res.Status
		if st.Clusters[0].Operation != nil {
			break
		}
	}
	op := st.Clusters[0].Operation
	if op == nil || op.Action != v1alpha1.ActionServiceOut {
		t.Fatalf("cluster a: operation %+v, want its service out in flight", op)
	}

	watch.quiet[op.ID] = true
	before := w.reports
	res, err := Step(ctx, w, sp, st, in)
	if err != nil {
		t.Fatal(err)
	}
	if w.reports != before {
		t.Errorf("a quiet operation was asked about: %d Report calls", w.reports-before)
	}
	if got := res.Status.Clusters[0].Operation; got == nil || got.ID != op.ID {
		t.Fatalf("no news, yet the operation changed: %+v", got)
	}

	w.mu.Lock()
	w.finish(w.ops[op.ID])
	w.mu.Unlock()
	watch.quiet[op.ID] = false
	watch.ended[op.ID] = pluginsdk.OperationReport{Status: pluginsdk.OperationDone}
	before = w.reports
	res, err = Step(ctx, w, sp, res.Status, in)
	if err != nil {
		t.Fatal(err)
	}
	if w.reports != before {
		t.Errorf("an end the watch saw was asked about again: %d Report calls", w.reports-before)
	}
	if got := res.Status.Clusters[0].Operation; got != nil && got.ID == op.ID {
		t.Fatalf("the service out the watch saw end is still in flight: %+v", got)
	}
	if len(res.Ended) != 1 || !res.Ended[0].OK {
		t.Errorf("ended %+v, want the service out, succeeded", res.Ended)
	}

	// Without a watch, every operation in flight is asked about.
	in.Watch = nil
	before = w.reports
	if _, err := Step(ctx, w, sp, res.Status, in); err != nil {
		t.Fatal(err)
	}
	if w.reports == before {
		t.Errorf("without a watch, the operation in flight was not asked about")
	}
}
