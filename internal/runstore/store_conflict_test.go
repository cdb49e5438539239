package runstore

import (
	"errors"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestSaveConflict(t *testing.T) {
	t.Parallel()
	s, _, ctx := newStore(t)
	if err := s.Save(ctx, newRun("demo", "1.0.0", time.Now())); err != nil {
		t.Fatal(err)
	}
	// Creating a run that exists is a conflict, not an overwrite.
	if err := s.Save(ctx, newRun("demo", "2.0.0", time.Now())); !errors.Is(err, ErrConflict) {
		t.Fatalf("second create = %v, want ErrConflict", err)
	}

	a, err := s.Get(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Get(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	a.Status.Message = "written by a"
	if err := s.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	b.Status.AbortRequested = true
	err = s.Save(ctx, b)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("save of a stale copy = %v, want ErrConflict", err)
	}
	cur, err := s.Get(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Status.Message != "written by a" || cur.Status.AbortRequested {
		t.Fatalf("the stale save wrote: %+v", cur.Status)
	}
	// Re-read, change, save: fine.
	cur.Status.AbortRequested = true
	if err := s.Save(ctx, cur); err != nil {
		t.Fatal(err)
	}
	// a is stale now too, even though it wrote last but one.
	if err := s.Save(ctx, a); !errors.Is(err, ErrConflict) {
		t.Fatalf("save of a after b's save = %v, want ErrConflict", err)
	}
}

// A save whose patch no longer applies to the stored status (another
// process removed the stage it changes) is a conflict too, not an error
// of its own.
func TestSaveConflictWhenThePatchNoLongerApplies(t *testing.T) {
	t.Parallel()
	s, _, ctx := newStore(t)
	run := newRun("demo", "1.0.0", time.Now())
	run.Status.Stages = append(run.Status.Stages, v1alpha1.StageStatus{Name: "b", Phase: v1alpha1.PhasePending}, v1alpha1.StageStatus{Name: "c", Phase: v1alpha1.PhasePending})
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	other := mustNew(t, testenv.Cluster(t).RESTConfig(), s.Namespace())
	cur, err := other.Get(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	cur.Status.Stages = cur.Status.Stages[:1]
	if err := other.Save(ctx, cur); err != nil {
		t.Fatal(err)
	}
	run.Status.Stages[2].Phase = v1alpha1.PhaseSucceeded // a patch of /status/stages/2/phase
	if err := s.Save(ctx, run); !errors.Is(err, ErrConflict) {
		t.Fatalf("save of a stale run whose patch no longer applies = %v, want ErrConflict", err)
	}
	if got, err := s.Get(ctx, "demo"); err != nil || len(got.Status.Stages) != 1 {
		t.Fatalf("the stale save wrote: %v, %d stages", err, len(got.Status.Stages))
	}
}
