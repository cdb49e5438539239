package fleet

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// world is a fleet as a plugin sees it, for the scripted scenarios: an
// operation takes effect only when the script finishes it, so a scenario
// can stop anywhere. It counts, after every change, the clusters serving,
// so a scenario can say the budget held throughout.
type world struct {
	mu        sync.Mutex
	clusters  map[string]*worldCluster
	ops       map[string]*worldOp
	seq       int
	canRevert bool
	// canFind: it serves FindOperation (and starts one operation per
	// request id).
	canFind bool
	// lose: the next call of this action starts its operation, but its
	// answer is lost (a timeout).
	lose v1alpha1.FleetAction
	// drop: the next call of this action never reaches the plugin.
	drop v1alpha1.FleetAction
	// started counts the operations started, by "cluster action".
	started map[string]int
	down    bool
	calls   int
	reports int // Report calls
	// minServing is the fewest clusters serving seen.
	minServing int
}

type worldCluster struct {
	master string
	pools  []pluginsdk.NodePoolVersion
	in     bool
	avail  bool
	// member is what the member runs left on the cluster.
	member string
	// gone: the plugin answers NotFound about it.
	gone bool
}

// notFound is the plugin's answer about a cluster it does not know.
func notFound(id string) error {
	return status.Errorf(codes.NotFound, "no cluster %s in this project", id)
}

type worldOp struct {
	id, cluster string
	action      v1alpha1.FleetAction
	pool        string
	version     string
	to          *pluginsdk.ClusterVersion
	status      pluginsdk.OperationStatus
	msg         string
	seq         int
	run         string
	request     string
}

var (
	_ Plugin       = (*world)(nil)
	_ MemberDriver = (*world)(nil)
)

func newWorld(ids []string, version string) *world {
	w := &world{clusters: map[string]*worldCluster{}, ops: map[string]*worldOp{}, started: map[string]int{}}
	for _, id := range ids {
		w.clusters[id] = &worldCluster{master: version, in: true, avail: true,
			pools: []pluginsdk.NodePoolVersion{{ID: "p1", Version: version}, {ID: "p2", Version: version}}}
	}
	w.minServing = len(ids)
	return w
}

func (w *world) serving() int {
	n := 0
	for _, c := range w.clusters {
		if c.in && c.avail {
			n++
		}
	}
	return n
}

// note records the serving count after a change.
func (w *world) note() { w.minServing = min(w.minServing, w.serving()) }

func (w *world) enter() error {
	w.mu.Lock()
	w.calls++
	if w.down {
		w.mu.Unlock()
		return fmt.Errorf("%w: connection refused", ErrPluginDown)
	}
	return nil
}

func (w *world) HealthCheck(context.Context) error {
	if err := w.enter(); err != nil {
		return err
	}
	w.mu.Unlock()
	return nil
}

func (w *world) GetVersion(_ context.Context, id string) (pluginsdk.ClusterVersion, error) {
	if err := w.enter(); err != nil {
		return pluginsdk.ClusterVersion{}, err
	}
	defer w.mu.Unlock()
	c := w.clusters[id]
	if c.gone {
		return pluginsdk.ClusterVersion{}, notFound(id)
	}
	return pluginsdk.ClusterVersion{Master: c.master, NodePools: append([]pluginsdk.NodePoolVersion(nil), c.pools...)}, nil
}

func (w *world) GetClusterStatus(_ context.Context, id string) (pluginsdk.ClusterStatus, error) {
	if err := w.enter(); err != nil {
		return pluginsdk.ClusterStatus{}, err
	}
	defer w.mu.Unlock()
	c := w.clusters[id]
	if c.gone {
		return pluginsdk.ClusterStatus{}, notFound(id)
	}
	s := pluginsdk.ClusterStatus{Service: pluginsdk.ServiceOut, Available: c.avail}
	if c.in {
		s.Service = pluginsdk.ServiceIn
	}
	return s, nil
}

func (w *world) GetOperationStatus(ctx context.Context, id string, op pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
	r, err := w.Report(ctx, id, op)
	return r.Status, err
}

func (w *world) Report(_ context.Context, _ string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	if err := w.enter(); err != nil {
		return pluginsdk.OperationReport{}, err
	}
	defer w.mu.Unlock()
	w.reports++
	o, ok := w.ops[op.ID]
	if !ok {
		return pluginsdk.OperationReport{Status: pluginsdk.OperationUnknown}, nil
	}
	return pluginsdk.OperationReport{Status: o.status, Message: o.msg}, nil
}

func (w *world) start(ctx context.Context, o *worldOp) (pluginsdk.Operation, error) {
	if err := w.enter(); err != nil {
		return pluginsdk.Operation{}, err
	}
	defer w.mu.Unlock()
	if w.drop == o.action {
		w.drop = ""
		return pluginsdk.Operation{}, fmt.Errorf("%w: %s: connection refused", ErrPluginDown, o.action)
	}
	o.request = pluginsdk.RequestID(ctx)
	if prev := w.byRequest(o.cluster, o.request); w.canFind && prev != nil {
		return pluginsdk.Operation{Type: string(prev.action), ID: prev.id}, nil
	}
	if o.action == v1alpha1.ActionUpgradeNodePool && o.version > w.clusters[o.cluster].master {
		return pluginsdk.Operation{}, fmt.Errorf("node pool %s would run %s, newer than the control plane's %s", o.pool, o.version, w.clusters[o.cluster].master)
	}
	w.seq++
	o.seq, o.id = w.seq, fmt.Sprintf("op-%d", w.seq)
	if isMember(o.action) {
		if o.run == "" {
			o.run = fmt.Sprintf("run-%d", w.seq)
		}
		o.id = MemberOperationID(o.action, o.cluster, o.run)
	}
	o.status = pluginsdk.OperationRunning
	w.ops[o.id] = o
	w.started[strings.TrimSpace(o.cluster+" "+string(o.action)+" "+o.pool)]++
	if w.lose == o.action {
		w.lose = ""
		return pluginsdk.Operation{}, fmt.Errorf("%w: %s: context deadline exceeded", ErrPluginDown, o.action)
	}
	return pluginsdk.Operation{Type: string(o.action), ID: o.id}, nil
}

func (w *world) byRequest(cluster, request string) *worldOp {
	for _, o := range w.ops {
		if request != "" && o.cluster == cluster && o.request == request {
			return o
		}
	}
	return nil
}

func (w *world) Find(_ context.Context, id, request string) (pluginsdk.Operation, error) {
	if err := w.enter(); err != nil {
		return pluginsdk.Operation{}, err
	}
	defer w.mu.Unlock()
	if !w.canFind {
		return pluginsdk.Operation{}, ErrUnsupported
	}
	if o := w.byRequest(id, request); o != nil {
		return pluginsdk.Operation{Type: string(o.action), ID: o.id}, nil
	}
	return pluginsdk.Operation{}, pluginsdk.ErrNoSuchRequest
}

func (w *world) ServiceIn(ctx context.Context, id string) (pluginsdk.Operation, error) {
	return w.start(ctx, &worldOp{cluster: id, action: v1alpha1.ActionServiceIn})
}

func (w *world) ServiceOut(ctx context.Context, id string) (pluginsdk.Operation, error) {
	return w.start(ctx, &worldOp{cluster: id, action: v1alpha1.ActionServiceOut})
}

func (w *world) UpgradeMaster(ctx context.Context, id, version string) (pluginsdk.Operation, error) {
	return w.start(ctx, &worldOp{cluster: id, action: v1alpha1.ActionUpgradeMaster, version: version})
}

func (w *world) UpgradeNodePool(ctx context.Context, id, pool, version string) (pluginsdk.Operation, error) {
	return w.start(ctx, &worldOp{cluster: id, action: v1alpha1.ActionUpgradeNodePool, pool: pool, version: version})
}

func (w *world) Capabilities(context.Context) Capabilities {
	return Capabilities{Revert: w.canRevert, Find: w.canFind}
}

func (w *world) Wait(context.Context, string, pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	return pluginsdk.OperationReport{}, ErrUnsupported
}

func (w *world) UpgradeMember(ctx context.Context, id string) (pluginsdk.Operation, error) {
	return w.start(ctx, &worldOp{cluster: id, action: v1alpha1.ActionUpgradeMember})
}

func (w *world) RollbackMember(ctx context.Context, id, run string) (pluginsdk.Operation, error) {
	return w.start(ctx, &worldOp{cluster: id, action: v1alpha1.ActionRollbackMember, run: run})
}

func (w *world) RevertCluster(ctx context.Context, id string, to pluginsdk.ClusterVersion) (pluginsdk.Operation, error) {
	return w.start(ctx, &worldOp{cluster: id, action: v1alpha1.ActionRevert, to: &to})
}

// running lists the operations running on the given clusters (all when
// none is given), oldest first.
func (w *world) running(ids ...string) []*worldOp {
	var out []*worldOp
	for _, o := range w.ops {
		if o.status == pluginsdk.OperationRunning && (len(ids) == 0 || contains(ids, o.cluster)) {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// finish ends the operation with its effect.
func (w *world) finish(o *worldOp) {
	c := w.clusters[o.cluster]
	switch o.action {
	case v1alpha1.ActionServiceOut:
		c.in = false
	case v1alpha1.ActionServiceIn:
		c.in = true
	case v1alpha1.ActionUpgradeMaster:
		c.master = o.version
	case v1alpha1.ActionUpgradeNodePool:
		for i := range c.pools {
			if c.pools[i].ID == o.pool {
				c.pools[i].Version = o.version
			}
		}
	case v1alpha1.ActionRevert:
		c.master = o.to.Master
		c.pools = append([]pluginsdk.NodePoolVersion(nil), o.to.NodePools...)
	case v1alpha1.ActionUpgradeMember:
		c.member = o.run + " applied"
	case v1alpha1.ActionRollbackMember:
		c.member = o.run + " rolled back"
	}
	o.status = pluginsdk.OperationDone
	w.note()
}

// describe prints a cluster as the plugin sees it.
func (w *world) describe(id string) string {
	c := w.clusters[id]
	var pools []string
	for _, p := range c.pools {
		pools = append(pools, p.ID+"="+p.Version)
	}
	out := fmt.Sprintf("%s master=%s %s in=%t available=%t", id, c.master, strings.Join(pools, " "), c.in, c.avail)
	if c.member != "" {
		out += " member=" + c.member
	}
	return out
}
