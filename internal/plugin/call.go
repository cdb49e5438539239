package plugin

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/upshift-dev/upshift/internal/metrics"
)

// Request types label the plugin-call metrics: the multicluster
// operator's values (GetClusterVersion is its name for GetVersion), then
// Upshift's.
const (
	reqHealthCheck        = "HealthCheck"
	reqGetVersion         = "GetClusterVersion"
	reqGetClusterStatus   = "GetClusterStatus"
	reqGetOperationStatus = "GetOperationStatus"
	reqServiceIn          = "ServiceIn"
	reqServiceOut         = "ServiceOut"
	reqUpgradeMaster      = "UpgradeMaster"
	reqUpgradeNodePool    = "UpgradeNodePool"
	reqDescribeOperation  = "DescribeOperation"
	reqWaitOperation      = "WaitOperation"
	reqRevertCluster      = "RevertCluster"
	reqFindOperation      = "FindOperation"
)

// read makes a call that changes nothing, retrying it with the backoff
// while the plugin is unavailable, slow or overloaded. Each attempt has
// its own deadline, so an attempt that hangs is retried too.
//
// The retries are this loop and not a gRPC service-config retryPolicy:
// a policy's attempts share one deadline, so it cannot retry an attempt
// that ran out of time; and here the last attempt's error tells
// ErrPluginDown from the plugin's own answer.
func (c *Client) read(ctx context.Context, requestType, method string, call func(context.Context) error) error {
	return c.done(ctx, requestType, method, c.retried(ctx, call))
}

// retried makes a read's attempts, uncounted.
func (c *Client) retried(ctx context.Context, call func(context.Context) error) error {
	b := c.opts.Backoff
	var err error
	for {
		if err = c.attempt(ctx, c.opts.CallTimeout, call); err == nil || !retryable(err) || b.Steps <= 0 || ctx.Err() != nil {
			return err
		}
		if !sleep(ctx, b.Step()) {
			return err
		}
	}
}

// mutate makes a call that starts an operation, once. A mutation that
// failed Unavailable or timed out may have reached the plugin and started
// its operation; sent again it could start a second one (a second node
// pool upgrade, a service-out twice). So it is not retried here (gRPC's
// transparent retry still re-sends what never left this process): the
// controller observes the cluster and decides again.
func (c *Client) mutate(ctx context.Context, requestType, method string, call func(context.Context) error) error {
	return c.done(ctx, requestType, method, c.attempt(ctx, c.opts.CallTimeout, call))
}

func (c *Client) attempt(ctx context.Context, timeout time.Duration, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return call(ctx)
}

// done counts the call, once whatever its attempts, and names what failed.
func (c *Client) done(ctx context.Context, requestType, method string, err error) error {
	err = c.wrap(ctx, method, err)
	metrics.PluginCall(requestType, err)
	return err
}

// wrap names the plugin and the method in err, and marks ErrPluginDown
// when the plugin did not answer while the caller was still waiting.
func (c *Client) wrap(ctx context.Context, method string, err error) error {
	if err == nil {
		return nil
	}
	if code := status.Code(err); ctx.Err() == nil && (code == codes.Unavailable || code == codes.DeadlineExceeded) {
		return fmt.Errorf("%w: %s at %s (check that the plugin runs and that the endpoint's address and TLS settings are right): %w", ErrPluginDown, method, c.address, err)
	}
	return fmt.Errorf("ops plugin at %s: %s: %w", c.address, method, err)
}

// retryable tells whether a read may succeed if sent again.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}

// sleep waits d, or until ctx ends (then false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
