package wait

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

func pause(d time.Duration) v1alpha1.Step {
	return v1alpha1.Step{Name: "hold", Pause: &v1alpha1.PauseStep{Duration: metav1.Duration{Duration: d}}}
}

// A resumed pause goes on from its saved start instead of starting over.
func TestPauseGoesOnFromItsSavedStart(t *testing.T) {
	s, err := New(pause(time.Hour), time.Now().Add(-time.Hour-time.Second), step.Waits{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background())
	if err != nil || res.Status != step.Succeeded {
		t.Fatalf("a pause started an hour ago = %+v, %v; want done", res, err)
	}
	s, _ = New(pause(time.Hour), time.Now(), step.Waits{NoWait: true})
	if _, err := s.Run(context.Background()); !errors.Is(err, step.ErrWaiting) {
		t.Fatalf("--no-wait pause = %v, want ErrWaiting", err)
	}
}

// A pause not yet over holds no goroutine: it says it is still running
// and asks to be asked again when it ends, from its saved start.
func TestPauseSaysWhenToAskAgain(t *testing.T) {
	started := time.Now().Add(-20 * time.Minute)
	s, err := New(pause(time.Hour), started, step.Waits{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background())
	if err != nil || res.Status != step.Running {
		t.Fatalf("a pause 20 minutes into an hour = %+v, %v; want Running", res, err)
	}
	if left := 40 * time.Minute; res.After > left || res.After < left-time.Minute {
		t.Errorf("asked again after %s, want about %s (the pause's end)", res.After, left)
	}
	if want := "paused until " + started.Add(time.Hour).UTC().Format(time.RFC3339); res.Message != want {
		t.Errorf("message %q, want %q", res.Message, want)
	}
}

// An approval waits until the record holds one, and says who approved.
func TestApprovalWaitsForTheRecord(t *testing.T) {
	spec := v1alpha1.Step{Name: "go-ahead", Approval: &v1alpha1.ApprovalStep{}}
	// Built without a record (a preview lists its targets), it says so
	// if run.
	bare, err := New(spec, time.Time{}, step.Waits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Run(context.Background()); err == nil {
		t.Fatal("an approval step without approvals to read ran")
	}
	asked := 0
	approvals := func(_ context.Context, name string) (*v1alpha1.Approval, error) {
		asked++
		if name != "go-ahead" {
			t.Errorf("asked for the approval of %q", name)
		}
		if asked < 3 {
			return nil, nil
		}
		return &v1alpha1.Approval{Step: name, By: "ops@host", At: metav1.NewMicroTime(time.Now())}, nil
	}
	s, err := New(spec, time.Time{}, step.Waits{Approvals: approvals, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background())
	if err != nil || res.Status != step.Succeeded || asked != 3 {
		t.Fatalf("approval = %+v, %v after %d reads", res, err, asked)
	}
	s, _ = New(spec, time.Time{}, step.Waits{Approvals: func(context.Context, string) (*v1alpha1.Approval, error) { return nil, nil }, Poll: time.Millisecond, NoWait: true})
	if _, err := s.Run(context.Background()); !errors.Is(err, step.ErrWaiting) {
		t.Fatalf("--no-wait approval = %v, want ErrWaiting", err)
	}
}

// Given a way to await the approval (a watch of the record), the step
// asks the record once and then awaits; when it cannot await (its user
// may not watch runs), it reads the record every Poll.
func TestApprovalAwaitsWhenItCan(t *testing.T) {
	spec := v1alpha1.Step{Name: "go-ahead", Approval: &v1alpha1.ApprovalStep{}}
	approval := &v1alpha1.Approval{Step: "go-ahead", By: "ops@host", At: metav1.NewMicroTime(time.Now())}
	for _, tt := range []struct {
		name      string
		await     step.Await
		wantAsked int
	}{
		{"awaits", func(context.Context, string) (*v1alpha1.Approval, error) { return approval, nil }, 1},
		{"cannot await", func(context.Context, string) (*v1alpha1.Approval, error) { return nil, step.ErrCannotAwait }, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asked := 0
			approvals := func(context.Context, string) (*v1alpha1.Approval, error) {
				asked++
				if asked < 3 {
					return nil, nil
				}
				return approval, nil
			}
			s, err := New(spec, time.Time{}, step.Waits{Approvals: approvals, Await: tt.await, Poll: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(context.Background())
			if err != nil || res.Status != step.Succeeded || asked != tt.wantAsked {
				t.Fatalf("Run = %+v, %v after %d reads of the record; want approved after %d", res, err, asked, tt.wantAsked)
			}
		})
	}
}
