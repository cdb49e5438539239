package sim

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// cluster is one simulated cluster: what it runs now, and its operations.
type cluster struct {
	mu      sync.Mutex
	id      string
	master  string
	pools   []pluginsdk.NodePoolVersion
	service pluginsdk.ServiceState

	ops map[string]*operation // every operation started, by ID
	// requests are the operations started, by the request id of the
	// call that started them (pluginsdk.Finder).
	requests map[string]*operation
	pending  []*operation // those whose effect is not applied yet
	// upgrading is the running upgrade or revert: a cluster runs one at
	// a time, as a cloud provider's does.
	upgrading *operation
	calls     int
	// failMatches counts, per Config.Failures rule, the operations that
	// matched it on this cluster.
	failMatches []int
}

func newCluster(spec ClusterSpec) *cluster {
	return &cluster{
		id:       spec.ID,
		master:   spec.Master,
		pools:    slices.Clone(spec.NodePools),
		service:  spec.Service,
		ops:      map[string]*operation{},
		requests: map[string]*operation{},
	}
}

// operation is started work: its times, whether it fails, and its effect.
type operation struct {
	typ, id    string
	start, end time.Time
	failed     bool
	reason     string // why it failed

	service pluginsdk.ServiceState   // ServiceIn, ServiceOut: the routing after
	pool    string                   // UpgradeNodePool
	version string                   // UpgradeMaster, UpgradeNodePool
	to      pluginsdk.ClusterVersion // RevertCluster

	stepsDone int32 // effects applied, of steps()
}

// steps: a revert sets its node pools back halfway through and its
// control plane at the end, so no node pool is ever newer than it; the
// others have one effect, at the end.
func (op *operation) steps() int32 {
	if op.typ == OpRevertCluster {
		return 2
	}
	return 1
}

func (op *operation) halfway() time.Time { return op.start.Add(op.end.Sub(op.start) / 2) }

// settle applies the effects of the operations that ended by now, in the
// order they ended.
func (c *cluster) settle(now time.Time) {
	if len(c.pending) == 0 {
		return
	}
	slices.SortStableFunc(c.pending, func(a, b *operation) int { return a.end.Compare(b.end) })
	kept := c.pending[:0]
	for _, op := range c.pending {
		if op.typ == OpRevertCluster && !op.failed && op.stepsDone == 0 && !now.Before(op.halfway()) {
			c.revertNodePools(op.to)
			op.stepsDone = 1
		}
		if now.Before(op.end) {
			kept = append(kept, op)
			continue
		}
		if !op.failed {
			c.apply(op)
			op.stepsDone = op.steps()
		}
		if c.upgrading == op {
			c.upgrading = nil
		}
	}
	clear(c.pending[len(kept):])
	c.pending = kept
}

func (c *cluster) apply(op *operation) {
	switch op.typ {
	case OpServiceIn, OpServiceOut:
		c.service = op.service
	case OpUpgradeMaster:
		c.master = op.version
	case OpUpgradeNodePool:
		c.setPool(op.pool, op.version)
	case OpRevertCluster:
		if op.stepsDone == 0 {
			c.revertNodePools(op.to)
		}
		c.master = op.to.Master
	}
}

func (c *cluster) revertNodePools(to pluginsdk.ClusterVersion) {
	for _, p := range to.NodePools {
		c.setPool(p.ID, p.Version)
	}
}

func (c *cluster) setPool(id, version string) {
	for i := range c.pools {
		if c.pools[i].ID == id {
			c.pools[i].Version = version
		}
	}
}

func (c *cluster) pool(id string) (pluginsdk.NodePoolVersion, bool) {
	for _, p := range c.pools {
		if p.ID == id {
			return p, true
		}
	}
	return pluginsdk.NodePoolVersion{}, false
}

func (c *cluster) version() pluginsdk.ClusterVersion {
	return pluginsdk.ClusterVersion{Master: c.master, NodePools: slices.Clone(c.pools)}
}

// status is where op is at now (its cluster settled).
func (op *operation) status(now time.Time) pluginsdk.OperationStatus {
	switch {
	case now.Before(op.end):
		return pluginsdk.OperationRunning
	case op.failed:
		return pluginsdk.OperationFailed
	}
	return pluginsdk.OperationDone
}

func (op *operation) report(now time.Time, clusterID string) pluginsdk.OperationReport {
	st := op.status(now)
	r := pluginsdk.OperationReport{Status: st, Done: op.stepsDone, Total: op.steps()}
	what := op.describe(clusterID)
	switch st {
	case pluginsdk.OperationRunning:
		r.Message = fmt.Sprintf("%s: running, %v left", what, op.end.Sub(now))
	case pluginsdk.OperationFailed:
		r.Message = fmt.Sprintf("%s: failed: %s", what, op.reason)
	default:
		r.Message = what + ": done"
	}
	return r
}

func (op *operation) describe(clusterID string) string {
	switch op.typ {
	case OpServiceIn:
		return "routing to " + clusterID
	case OpServiceOut:
		return "routing away from " + clusterID
	case OpUpgradeMaster:
		return fmt.Sprintf("upgrade of %s's control plane to %s", clusterID, op.version)
	case OpUpgradeNodePool:
		return fmt.Sprintf("upgrade of %s's node pool %s to %s", clusterID, op.pool, op.version)
	}
	return fmt.Sprintf("revert of %s to %s", clusterID, op.to.Master)
}
