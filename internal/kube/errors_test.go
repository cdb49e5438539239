package kube

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

func TestNotReadyError(t *testing.T) {
	h := Health{Status: status.InProgressStatus, Message: "deployment demo/web: Available: 1/3"}
	tests := []struct {
		name                     string
		err                      error
		want                     string
		failing, noMatch, timout bool
	}{
		{
			name:   "timeout",
			err:    &NotReadyError{Reason: ErrTimeout, Health: h, Timeout: 2 * time.Minute},
			want:   "timed out after 2m: deployment demo/web: Available: 1/3",
			timout: true,
		},
		{
			name:   "timeout in hours",
			err:    &NotReadyError{Reason: ErrTimeout, Health: h, Timeout: time.Hour},
			want:   "timed out after 1h: deployment demo/web: Available: 1/3",
			timout: true,
		},
		{
			name:    "failing, wrapped by a caller",
			err:     fmt.Errorf("gate web: %w", &NotReadyError{Reason: ErrFailing, Health: Health{Status: status.FailedStatus, Message: "deployment demo/web: pod demo/web-1 container web: CrashLoopBackOff (restarts: 3)"}}),
			want:    "gate web: deployment demo/web: pod demo/web-1 container web: CrashLoopBackOff (restarts: 3)",
			failing: true,
		},
		{
			name:    "no match is failing",
			err:     &NotReadyError{Reason: ErrNoMatch, Health: Health{Message: `deployments matching "app=web" in demo: nothing matches`}},
			want:    `deployments matching "app=web" in demo: nothing matches`,
			failing: true, noMatch: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if errors.Is(tt.err, ErrFailing) != tt.failing || errors.Is(tt.err, ErrNoMatch) != tt.noMatch || errors.Is(tt.err, ErrTimeout) != tt.timout {
				t.Errorf("errors.Is: failing=%t noMatch=%t timeout=%t", errors.Is(tt.err, ErrFailing), errors.Is(tt.err, ErrNoMatch), errors.Is(tt.err, ErrTimeout))
			}
			var nre *NotReadyError
			if !errors.As(tt.err, &nre) {
				t.Errorf("errors.As(*NotReadyError) = false")
			}
		})
	}
}

func TestRefString(t *testing.T) {
	for _, tt := range []struct {
		ref  fmt.Stringer
		want string
	}{
		{ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web"}, "deployment demo/web"},
		{ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}, "customresourcedefinition widgets.example.com"},
		{SelectorRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Selector: "app=web"}, `deployments matching "app=web" in demo`},
		{SelectorRef{APIVersion: "v1", Kind: "Node", Selector: "role=worker"}, `nodes matching "role=worker"`},
	} {
		if got := tt.ref.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
