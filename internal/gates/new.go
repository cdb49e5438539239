package gates

import (
	"errors"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/gates/http"
	"github.com/upshift-dev/upshift/internal/gates/ready"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
)

// DefaultTimeout bounds a gate whose plan sets no timeout.
const DefaultTimeout = 2 * time.Minute

// ErrInvalidGate: a gate sets no kind, or more than one.
var ErrInvalidGate = errors.New("a gate needs exactly one kind (ready or http)")

// New builds the check of one gate. timeout is the gate's timeout; zero
// means DefaultTimeout. An http gate's own timeout, if set, wins.
func New(g v1alpha1.Gate, timeout time.Duration, d *steps.Deps) (step.Gate, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	switch {
	case (g.Ready == nil) == (g.HTTP == nil):
		return nil, ErrInvalidGate
	case g.Ready != nil:
		gate, err := ready.New(*g.Ready, timeout, d.Waiter)
		if err != nil {
			return nil, fmt.Errorf("ready gate: %w", err)
		}
		return gate, nil
	default:
		gate, err := http.New(*g.HTTP, timeout)
		if err != nil {
			return nil, fmt.Errorf("http gate: %w", err)
		}
		return gate, nil
	}
}
