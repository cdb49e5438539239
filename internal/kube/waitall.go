package kube

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxParallelWaits bounds the watches one step opens at once.
const maxParallelWaits = 16

// errOtherFailed stops the remaining waits once one failed.
var errOtherFailed = errors.New("another object failed")

// WaitAllCurrent waits until every object is Current, each with timeout. It
// returns at the first failure (stopping the other waits) with that wait's
// error; with several, the first in refs order that was not stopped by it.
func (w *Waiter) WaitAllCurrent(ctx context.Context, refs []ObjectRef, timeout time.Duration) error {
	return waitAll(ctx, len(refs), func(ctx context.Context, i int) error {
		_, err := w.WaitCurrent(ctx, refs[i], timeout)
		return err
	})
}

// WaitAllWritten is WaitAllCurrent for objects as the API server answered
// this process's writes of them (WaitWritten): no list to learn how
// recent they must be, and none at all for an answer Current already.
func (w *Waiter) WaitAllWritten(ctx context.Context, written []*unstructured.Unstructured, timeout time.Duration) error {
	return waitAll(ctx, len(written), func(ctx context.Context, i int) error {
		_, err := w.WaitWritten(ctx, written[i], timeout)
		return err
	})
}

// waitAll runs wait for 0..n-1, at most maxParallelWaits at once, and
// stops the others at the first error.
func waitAll(ctx context.Context, n int, wait func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, n)
	slots := make(chan struct{}, maxParallelWaits)
	var wg sync.WaitGroup
	for i := range n {
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
			if err := wait(ctx, i); err != nil {
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
