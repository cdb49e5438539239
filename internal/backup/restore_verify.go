package backup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// verify checks the restored objects: equal to the snapshot, then
// Current.
func (c *Client) verify(ctx context.Context, rb *v1alpha1.Rollback, restored []Entry, timeout time.Duration) error {
	if c.BeforeVerify != nil {
		c.BeforeVerify()
	}
	var errs []error
	var pending []Entry
	for _, e := range restored {
		live, err := c.get(ctx, e.Ref)
		if err != nil {
			errs = append(errs, fmt.Errorf("verify %s: %w", e.Ref, err))
			continue
		}
		if live == nil {
			rb.Differences = append(rb.Differences, fmt.Sprintf("%s: missing after restore", e.Ref))
			continue
		}
		differences, notCompared := Compare(e.Object, live)
		for _, d := range differences {
			rb.Differences = append(rb.Differences, fmt.Sprintf("%s: %s", e.Ref, d))
		}
		for _, d := range notCompared {
			rb.NotCompared = append(rb.NotCompared, fmt.Sprintf("%s: %s", e.Ref, d))
		}
		if res, err := status.Compute(live); err != nil || res.Status != status.CurrentStatus {
			pending = append(pending, e)
		}
	}
	diffs, err := c.waitCurrent(ctx, pending, timeout)
	rb.Differences = append(rb.Differences, diffs...)
	if err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// waitCurrent waits, in parallel, until each object is Current. One that
// is not within timeout (or fails) is a difference.
func (c *Client) waitCurrent(ctx context.Context, entries []Entry, timeout time.Duration) ([]string, error) {
	diffs := make([]string, len(entries))
	errs := make([]error, len(entries))
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i, e := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			_, err := c.waiter.WaitCurrent(ctx, e.Ref, timeout)
			var nr *kube.NotReadyError
			switch {
			case err == nil:
			case errors.As(err, &nr) && errors.Is(err, kube.ErrTimeout):
				diffs[i] = fmt.Sprintf("%s: not Ready after %s: %s", e.Ref, kube.ShortDuration(timeout), trimRef(nr.Health.Message, e.Ref))
			case errors.As(err, &nr):
				diffs[i] = fmt.Sprintf("%s: not Ready: %s", e.Ref, trimRef(nr.Health.Message, e.Ref))
			default:
				errs[i] = fmt.Errorf("wait for %s: %w", e.Ref, err)
			}
		}()
	}
	wg.Wait()
	var out []string
	for _, d := range diffs {
		if d != "" {
			out = append(out, d)
		}
	}
	return out, errors.Join(errs...)
}

// trimRef drops the "kind ns/name: " that kube's messages start with.
func trimRef(msg string, ref step.Ref) string {
	return strings.TrimPrefix(msg, ref.String()+": ")
}
