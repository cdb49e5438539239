package kube

import (
	"context"
	"errors"
	"sync"
	"time"
)

// maxParallelWaits bounds the watches one step opens at once.
const maxParallelWaits = 16

// errOtherFailed stops the remaining waits once one failed.
var errOtherFailed = errors.New("another object failed")

// WaitAllCurrent waits until every object is Current, each with timeout. It
// returns at the first failure (stopping the other waits) with that wait's
// error; with several, the first in refs order that was not stopped by it.
func (w *Waiter) WaitAllCurrent(ctx context.Context, refs []ObjectRef, timeout time.Duration) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(refs))
	slots := make(chan struct{}, maxParallelWaits)
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				errs[i] = context.Cause(ctx)
				return
			}
			if _, err := w.WaitCurrent(ctx, ref, timeout); err != nil {
				errs[i] = err
				cancel(errOtherFailed)
			}
		}()
	}
	wg.Wait()
	var stopped error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, errOtherFailed):
			stopped = err
		default:
			return err
		}
	}
	return stopped
}
