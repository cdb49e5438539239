package sim

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// HealthCheck answers at once: the simulation is always up.
func (s *Sim) HealthCheck(context.Context) error {
	s.totalCalls.Add(1)
	return nil
}

// GetVersion is what the cluster runs now.
func (s *Sim) GetVersion(_ context.Context, clusterID string) (pluginsdk.ClusterVersion, error) {
	c, _, err := s.lock(clusterID)
	if err != nil {
		return pluginsdk.ClusterVersion{}, err
	}
	defer c.mu.Unlock()
	return c.version(), nil
}

// GetClusterStatus is the cluster's routing, and whether it is available
// (false while it flaps).
func (s *Sim) GetClusterStatus(_ context.Context, clusterID string) (pluginsdk.ClusterStatus, error) {
	c, now, err := s.lock(clusterID)
	if err != nil {
		return pluginsdk.ClusterStatus{}, err
	}
	defer c.mu.Unlock()
	return pluginsdk.ClusterStatus{Service: c.service, Available: !s.flapping(clusterID, now)}, nil
}

// GetOperationStatus of an operation the cluster never started is
// OperationUnknown, not an error: the wire enum has the value for it, and
// the multicluster operator waits on it as on a running one.
func (s *Sim) GetOperationStatus(_ context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
	c, now, err := s.lock(clusterID)
	if err != nil {
		return pluginsdk.OperationUnknown, err
	}
	defer c.mu.Unlock()
	o, ok := c.ops[op.ID]
	if !ok {
		return pluginsdk.OperationUnknown, nil
	}
	return o.status(now), nil
}

// DescribeOperation is GetOperationStatus with what the operation does and
// why it failed; an unknown operation is OperationUnknown, saying so.
func (s *Sim) DescribeOperation(_ context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	c, now, err := s.lock(clusterID)
	if err != nil {
		return pluginsdk.OperationReport{}, err
	}
	defer c.mu.Unlock()
	return describe(c, now, op), nil
}

func describe(c *cluster, now time.Time, op pluginsdk.Operation) pluginsdk.OperationReport {
	o, ok := c.ops[op.ID]
	if !ok {
		return pluginsdk.OperationReport{Status: pluginsdk.OperationUnknown, Message: "no operation " + op.ID + " on " + c.id}
	}
	return o.report(now, c.id)
}

// WaitOperation returns when the operation has ended, or when ctx ends
// (with the report as it stands). It sleeps on the simulation's clock.
func (s *Sim) WaitOperation(ctx context.Context, clusterID string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	c, now, err := s.lock(clusterID)
	for err == nil {
		rep := describe(c, now, op)
		var end time.Time
		if o := c.ops[op.ID]; o != nil {
			end = o.end
		}
		c.mu.Unlock()
		if rep.Status != pluginsdk.OperationRunning {
			return rep, nil
		}
		t := s.clock.NewTimer(end.Sub(now))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return rep, nil
		}
		c.mu.Lock()
		now = s.clock.Now()
		c.settle(now)
	}
	return pluginsdk.OperationReport{}, err
}

// ServiceIn routes to the cluster once the operation ends.
func (s *Sim) ServiceIn(ctx context.Context, clusterID string) (pluginsdk.Operation, error) {
	return s.route(ctx, clusterID, OpServiceIn, pluginsdk.ServiceIn)
}

// ServiceOut routes away from the cluster once the operation ends.
func (s *Sim) ServiceOut(ctx context.Context, clusterID string) (pluginsdk.Operation, error) {
	return s.route(ctx, clusterID, OpServiceOut, pluginsdk.ServiceOut)
}

func (s *Sim) route(ctx context.Context, clusterID, typ string, to pluginsdk.ServiceState) (pluginsdk.Operation, error) {
	c, now, err := s.lock(clusterID)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	defer c.mu.Unlock()
	if op, again := c.again(ctx); again {
		return op, nil
	}
	return s.start(ctx, c, now, &operation{typ: typ, service: to}), nil
}

// UpgradeMaster sets the control plane's version once the operation
// ends. It refuses while another upgrade runs, and a version older than
// a node pool's (no kubelet may be newer than its API server).
func (s *Sim) UpgradeMaster(ctx context.Context, clusterID, version string) (pluginsdk.Operation, error) {
	v, err := parseVersion(version)
	if err != nil {
		return pluginsdk.Operation{}, status.Error(codes.InvalidArgument, err.Error())
	}
	c, now, err := s.lock(clusterID)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	defer c.mu.Unlock()
	if op, again := c.again(ctx); again {
		return op, nil
	}
	if err := c.idle(); err != nil {
		return pluginsdk.Operation{}, err
	}
	for _, p := range c.pools {
		if pv, _ := parseVersion(p.Version); pv.GreaterThan(v) {
			return pluginsdk.Operation{}, status.Errorf(codes.FailedPrecondition,
				"%s: control plane to %s would be older than node pool %s at %s: downgrade the node pools first", c.id, version, p.ID, p.Version)
		}
	}
	return s.start(ctx, c, now, &operation{typ: OpUpgradeMaster, version: version}), nil
}

// UpgradeNodePool sets the node pool's version once the operation ends.
// It refuses while another upgrade runs, and a version newer than the
// control plane's.
func (s *Sim) UpgradeNodePool(ctx context.Context, clusterID, nodePoolID, version string) (pluginsdk.Operation, error) {
	v, err := parseVersion(version)
	if err != nil {
		return pluginsdk.Operation{}, status.Error(codes.InvalidArgument, err.Error())
	}
	c, now, err := s.lock(clusterID)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	defer c.mu.Unlock()
	if op, again := c.again(ctx); again {
		return op, nil
	}
	if _, ok := c.pool(nodePoolID); !ok {
		return pluginsdk.Operation{}, status.Errorf(codes.NotFound, "%s has no node pool %q (%s)", c.id, nodePoolID, poolIDs(c))
	}
	if err := c.idle(); err != nil {
		return pluginsdk.Operation{}, err
	}
	if m, _ := parseVersion(c.master); v.GreaterThan(m) {
		return pluginsdk.Operation{}, status.Errorf(codes.FailedPrecondition,
			"%s: node pool %s to %s would be newer than the control plane at %s: upgrade the control plane first", c.id, nodePoolID, version, c.master)
	}
	return s.start(ctx, c, now, &operation{typ: OpUpgradeNodePool, pool: nodePoolID, version: version}), nil
}

// RevertCluster sets the node pools given back (halfway through), then
// the control plane (at the end). It refuses while another upgrade runs,
// and versions that would leave a node pool newer than the control plane.
func (s *Sim) RevertCluster(ctx context.Context, clusterID string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error) {
	m, err := parseVersion(to.Master)
	if err != nil {
		return pluginsdk.Operation{}, status.Errorf(codes.InvalidArgument, "master %v", err)
	}
	c, now, err := s.lock(clusterID)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	defer c.mu.Unlock()
	if op, again := c.again(ctx); again {
		return op, nil
	}
	if err := c.idle(); err != nil {
		return pluginsdk.Operation{}, err
	}
	after := map[string]string{}
	for _, p := range c.pools {
		after[p.ID] = p.Version
	}
	for _, p := range to.NodePools {
		if _, ok := after[p.ID]; !ok {
			return pluginsdk.Operation{}, status.Errorf(codes.NotFound, "%s has no node pool %q (%s)", c.id, p.ID, poolIDs(c))
		}
		if _, err := parseVersion(p.Version); err != nil {
			return pluginsdk.Operation{}, status.Errorf(codes.InvalidArgument, "node pool %s: %v", p.ID, err)
		}
		after[p.ID] = p.Version
	}
	for id, v := range after {
		if pv, _ := parseVersion(v); pv.GreaterThan(m) {
			return pluginsdk.Operation{}, status.Errorf(codes.FailedPrecondition,
				"%s: reverting the control plane to %s would leave node pool %s at %s, newer: revert that node pool too", c.id, to.Master, id, v)
		}
	}
	to.NodePools = append([]pluginsdk.NodePoolVersion(nil), to.NodePools...)
	return s.start(ctx, c, now, &operation{typ: OpRevertCluster, to: to}), nil
}

// again is the operation a call sent again with the request id of one
// that started it: the same operation, not a second.
func (c *cluster) again(ctx context.Context) (pluginsdk.Operation, bool) {
	op, ok := c.requests[pluginsdk.RequestID(ctx)]
	if !ok {
		return pluginsdk.Operation{}, false
	}
	return pluginsdk.Operation{Type: op.typ, ID: op.id}, true
}

// FindOperation is the operation the call with requestID started on the
// cluster (pluginsdk.Finder).
func (s *Sim) FindOperation(_ context.Context, clusterID, requestID string) (pluginsdk.Operation, error) {
	c, _, err := s.lock(clusterID)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	defer c.mu.Unlock()
	op, ok := c.requests[requestID]
	if !ok {
		return pluginsdk.Operation{}, fmt.Errorf("%s: request %s: %w", clusterID, requestID, pluginsdk.ErrNoSuchRequest)
	}
	return pluginsdk.Operation{Type: op.typ, ID: op.id}, nil
}

// Started counts the operations of a type started on the cluster: a call
// sent again with its request id starts none.
func (s *Sim) Started(clusterID, typ string) int {
	c, ok := s.clusters[clusterID]
	if !ok {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, op := range c.ops {
		if op.typ == typ {
			n++
		}
	}
	return n
}

// idle refuses a second upgrade while one runs, as cloud providers do.
func (c *cluster) idle() error {
	if op := c.upgrading; op != nil {
		return status.Errorf(codes.FailedPrecondition, "%s is running operation %s (%s): wait until it ends", c.id, op.id, op.typ)
	}
	return nil
}

// start records op as started now on c, decides whether it fails, and
// returns its handle. An operation without latency has ended already.
func (s *Sim) start(ctx context.Context, c *cluster, now time.Time, op *operation) pluginsdk.Operation {
	op.id = s.newOperationID()
	if id := pluginsdk.RequestID(ctx); id != "" {
		c.requests[id] = op
	}
	op.start, op.end = now, now.Add(s.latency(op.typ))
	op.failed, op.reason = s.failure(c, op.typ)
	c.ops[op.id] = op
	c.pending = append(c.pending, op)
	if op.typ != OpServiceIn && op.typ != OpServiceOut {
		c.upgrading = op
	}
	c.settle(now)
	return pluginsdk.Operation{Type: op.typ, ID: op.id}
}

func poolIDs(c *cluster) string {
	s := "its node pools:"
	for _, p := range c.pools {
		s += " " + p.ID
	}
	return s
}
