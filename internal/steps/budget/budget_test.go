package budget

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestVerdict(t *testing.T) {
	h := kube.Health{Status: status.InProgressStatus, Message: "deployment demo/web: Updated: 1/3"}
	malformed := errors.New("apply deployment demo/web: Invalid")
	tests := []struct {
		name    string
		err     error
		spent   bool
		want    step.Result
		wantErr error
	}{
		{
			name: "wait timed out: the step's timeout is reported",
			err:  fmt.Errorf("wait: %w", &kube.NotReadyError{Reason: kube.ErrTimeout, Health: h, Timeout: 37 * time.Second}),
			want: step.Failure("timed out after 2m: deployment demo/web: Updated: 1/3"),
		},
		{
			name: "failing",
			err:  &kube.NotReadyError{Reason: kube.ErrFailing, Health: kube.Health{Message: "deployment demo/web: pod demo/web-1 container web: CrashLoopBackOff (restarts: 2)"}},
			want: step.Failure("deployment demo/web: pod demo/web-1 container web: CrashLoopBackOff (restarts: 2)"),
		},
		{
			name:  "a call cut by the deadline",
			err:   fmt.Errorf("apply deployment demo/web: %w", context.DeadlineExceeded),
			spent: true,
			want:  step.Failure("timed out after 2m: apply deployment demo/web: context deadline exceeded"),
		},
		{
			name:    "anything else stays an error",
			err:     malformed,
			wantErr: malformed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := 2 * time.Minute
			b := Start(context.Background(), timeout)
			if tt.spent {
				b = Start(context.Background(), time.Nanosecond)
				<-b.Context().Done()
				b.timeout = timeout
			}
			defer b.Stop()
			got, err := b.Verdict(tt.err)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("Verdict error = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Verdict = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCallerCancelIsAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := Start(ctx, time.Minute)
	defer b.Stop()
	cancel()
	<-b.Context().Done()
	if _, err := b.Verdict(fmt.Errorf("apply: %w", context.Canceled)); !errors.Is(err, context.Canceled) {
		t.Errorf("Verdict after the caller cancelled = %v, want context.Canceled", err)
	}
	if b.Left() <= 0 {
		t.Errorf("Left = %s, want > 0", b.Left())
	}
}
