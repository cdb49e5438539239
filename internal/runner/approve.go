package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// Approve records an operator's approval of the run's waiting approval
// step (or of the named one). Like an abort request it is written into the
// run record without the lease when another process drives the run: that
// process reads it and goes on. Returns the approved step's name.
func (s *Session) Approve(ctx context.Context, name, stepName string) (string, error) {
	by := lease.CurrentIdentity(name)
	who := fmt.Sprintf("%s@%s", by.User, by.Host)
	if _, valid, err := lease.Holder(ctx, s.cs, s.opts.Namespace, "upshift"); err != nil || !valid {
		held, err := s.acquire(ctx, name)
		if err != nil {
			return "", err
		}
		defer held.Release()
	}
	for {
		run, err := s.store.Get(ctx, name)
		if err != nil {
			return "", err
		}
		approved, err := engine.Approve(run, stepName, who, time.Now())
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrRefused, err)
		}
		err = s.store.Save(ctx, run)
		if errors.Is(err, runstore.ErrConflict) {
			select { // the driver saved meanwhile: read again
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return "", err
		}
		return approved, nil
	}
}
