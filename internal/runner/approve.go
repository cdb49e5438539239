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

// Approve records an operator's approval of the approval step the run
// waits at, or of the named one (engine.Approve rules). Like an abort
// request it is written into the run record without the lease when another
// process drives the run: that process reads it and goes on. A refusal
// wraps ErrRefused and an *engine.ApprovalRefused, for the driver's hint.
func (s *Session) Approve(ctx context.Context, name, stepName string) (engine.Approval, error) {
	by := lease.CurrentIdentity(name)
	return s.ApproveAs(ctx, name, stepName, fmt.Sprintf("%s@%s", by.User, by.Host))
}

// ApproveAs is Approve recorded as approved by who: a driver that acts
// for someone else (the HTTP API for its logged-in user) says who.
func (s *Session) ApproveAs(ctx context.Context, name, stepName, who string) (engine.Approval, error) {
	if err := s.ready(ctx); err != nil {
		return engine.Approval{}, err
	}
	// No lease: the approval is one field of the run record, saved against
	// its resourceVersion, whether or not a driver holds the lease (a
	// driver that saves meanwhile wins and we read again; the driver picks
	// the approval up from the record). Taking the lease when it looked
	// free raced a driver starting in this very process: the approval then
	// waited out a lease duration and was refused as "held".
	for {
		run, err := s.store.Get(ctx, name)
		if err != nil {
			return engine.Approval{}, err
		}
		approved, err := engine.Approve(run, stepName, who, time.Now())
		if err != nil {
			return engine.Approval{}, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		err = s.store.Save(ctx, run)
		if errors.Is(err, runstore.ErrConflict) {
			select { // the driver saved meanwhile: read again
			case <-ctx.Done():
				return engine.Approval{}, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return engine.Approval{}, err
		}
		return approved, nil
	}
}
