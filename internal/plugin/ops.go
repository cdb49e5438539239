package plugin

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	pluginpb "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
	opsv1 "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/upshift/ops/v1"
)

// Describe calls upshift.ops.v1.Ops/DescribeOperation: the operation's
// status with why it failed and how far it got. It is a read (retried).
// A plugin without it gives ErrUnsupported: use GetOperationStatus.
func (c *Client) Describe(ctx context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	if err := c.unsupported(&c.noDescribe, "DescribeOperation"); err != nil {
		return pluginsdk.OperationReport{}, err
	}
	var rep *opsv1.OperationReport
	err := c.read(ctx, reqDescribeOperation, "DescribeOperation", func(ctx context.Context) (err error) {
		rep, err = c.ops.DescribeOperation(ctx, &opsv1.OperationRequest{ClusterID: clusterID, Operation: pluginsdk.WireOperation(op)})
		return err
	})
	if err != nil {
		return pluginsdk.OperationReport{}, c.remember(&c.noDescribe, err)
	}
	return pluginsdk.OperationReportFromWire(rep), nil
}

// Wait calls upshift.ops.v1.Ops/WaitOperation: it returns when the
// operation is no longer running, or after Options.WaitTimeout (less when
// ctx ends sooner) with the report as it stands. It is not retried: on an
// error the caller polls. A plugin without it gives ErrUnsupported.
func (c *Client) Wait(ctx context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	if err := c.unsupported(&c.noWait, "WaitOperation"); err != nil {
		return pluginsdk.OperationReport{}, err
	}
	timeout := c.waitTimeout(ctx)
	req := &opsv1.WaitOperationRequest{ClusterID: clusterID, Operation: pluginsdk.WireOperation(op), Timeout: durationpb.New(timeout)}
	var rep *opsv1.OperationReport
	err := c.attempt(ctx, timeout+c.opts.CallTimeout, func(ctx context.Context) (err error) {
		rep, err = c.ops.WaitOperation(ctx, req)
		return err
	})
	if err = c.done(ctx, reqWaitOperation, "WaitOperation", err); err != nil {
		return pluginsdk.OperationReport{}, c.remember(&c.noWait, err)
	}
	return pluginsdk.OperationReportFromWire(rep), nil
}

// waitTimeout is how long the plugin may wait: Options.WaitTimeout, cut
// so that the answer comes back before ctx's deadline.
func (c *Client) waitTimeout(ctx context.Context) time.Duration {
	timeout := c.opts.WaitTimeout
	if deadline, ok := ctx.Deadline(); ok {
		left := time.Until(deadline)
		left -= min(time.Second, left/2) // time for the answer
		timeout = max(0, min(timeout, left))
	}
	return timeout
}

// Revert calls upshift.ops.v1.Ops/RevertCluster, once (a mutation; see
// mutate). A plugin without it gives ErrUnsupported: revert with
// UpgradeNodePool, then UpgradeMaster.
func (c *Client) Revert(ctx context.Context, clusterID string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error) {
	if err := c.unsupported(&c.noRevert, "RevertCluster"); err != nil {
		return pluginsdk.Operation{}, err
	}
	op, err := c.startOperation(ctx, reqRevertCluster, "RevertCluster", func(ctx context.Context) (*pluginpb.Operation, error) {
		return c.ops.RevertCluster(ctx, &opsv1.RevertClusterRequest{ClusterID: clusterID, To: pluginsdk.WireClusterVersion(clusterID, to)})
	})
	if err != nil {
		return pluginsdk.Operation{}, c.remember(&c.noRevert, err)
	}
	return op, nil
}

// Find calls upshift.ops.v1.Ops/FindOperation: the operation a mutation
// sent with requestID started, or an error for which
// pluginsdk.IsNoSuchRequest holds when none reached the plugin. It is a
// read (retried). A plugin without it gives ErrUnsupported.
func (c *Client) Find(ctx context.Context, clusterID, requestID string) (pluginsdk.Operation, error) {
	if err := c.unsupported(&c.noFind, "FindOperation"); err != nil {
		return pluginsdk.Operation{}, err
	}
	var op *pluginpb.Operation
	err := c.read(ctx, reqFindOperation, "FindOperation", func(ctx context.Context) (err error) {
		op, err = c.ops.FindOperation(ctx, &opsv1.FindOperationRequest{ClusterID: clusterID, RequestID: requestID})
		return err
	})
	if err != nil {
		return pluginsdk.Operation{}, c.remember(&c.noFind, err)
	}
	return pluginsdk.OperationFromWire(op), nil
}

// unsupported is ErrUnsupported when the plugin said before that it does
// not serve method.
func (c *Client) unsupported(known *atomic.Bool, method string) error {
	if known.Load() {
		return fmt.Errorf("%w: ops plugin at %s does not serve upshift.ops.v1 %s", ErrUnsupported, c.address, method)
	}
	return nil
}

// remember marks the method unsupported when the plugin answered
// Unimplemented (it lacks the method, or upshift.ops.v1 altogether).
func (c *Client) remember(known *atomic.Bool, err error) error {
	if status.Code(err) != codes.Unimplemented {
		return err
	}
	known.Store(true)
	return fmt.Errorf("%w: %w", ErrUnsupported, err)
}

// Capabilities are the upshift.ops.v1 calls a plugin serves.
type Capabilities struct {
	Describe, Wait, Revert, Find bool
}

// Capabilities asks the plugin which upshift.ops.v1 calls it serves, once
// per client: a plugin that does not serve Capabilities serves none of
// them (it predates them, or is the multicluster operator's). An error
// is the plugin's being down: asked again next time.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	c.capsMu.Lock()
	defer c.capsMu.Unlock()
	if c.caps != nil {
		return *c.caps, nil
	}
	var got *opsv1.OpsCapabilities
	// Not counted in the plugin-call metrics: it is Upshift's probe, not
	// a call of the operator's protocol, and a plugin without
	// upshift.ops.v1 answers it Unimplemented, healthy as it is.
	err := c.wrap(ctx, "Capabilities", c.retried(ctx, func(ctx context.Context) (err error) {
		got, err = c.ops.Capabilities(ctx, &emptypb.Empty{})
		return err
	}))
	switch {
	case status.Code(err) == codes.Unimplemented:
		c.caps = &Capabilities{}
	case err != nil:
		return Capabilities{}, err
	default:
		c.caps = &Capabilities{Describe: got.GetDescribeOperation(), Wait: got.GetWaitOperation(), Revert: got.GetRevertCluster(), Find: got.GetFindOperation()}
	}
	c.noDescribe.Store(!c.caps.Describe)
	c.noWait.Store(!c.caps.Wait)
	c.noRevert.Store(!c.caps.Revert)
	c.noFind.Store(!c.caps.Find)
	return *c.caps, nil
}
