// Package local is an ops plugin over clusters of Upshift's local control
// plane (kube-apiserver, etcd, controller-manager, scheduler, kwok as the
// kubelet), for tests and demos of fleets:
//
//   - a node pool is the nodes labelled upshift.dev/node-pool=POOL; its
//     version is their kubelet's (kwok reports the label
//     upshift.dev/kubelet-version);
//   - UpgradeNodePool upgrades the pool's nodes one by one: cordon, drain
//     with the eviction API (so PodDisruptionBudgets hold; a drain where
//     no pod leaves the node for DrainTimeout fails the operation), set the
//     node's kubelet version in place, uncordon, wait until it is Ready;
//   - the control plane's version is recorded in the ConfigMap
//     kube-system/upshift-local-plugin (a local API server's binary cannot
//     change), set by UpgradeMaster after MasterLatency;
//   - service out and in flip that ConfigMap's label upshift.dev/in-service,
//     which a test's "router" reads;
//   - a cluster is available while its API server answers and every node
//     is Ready.
//
// Operations live in the plugin's memory: a plugin restarted forgets them
// (GetOperationStatus answers UNKNOWN), as a plugin without state would.
package local

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Labels and names the plugin reads and writes in each cluster.
const (
	LabelNodePool       = "upshift.dev/node-pool"
	LabelKubeletVersion = "upshift.dev/kubelet-version" // kwok reports it (localcluster.KubeletVersionLabel)
	LabelInService      = "upshift.dev/in-service"
	StateNamespace      = "kube-system"
	StateName           = "upshift-local-plugin"
	keyMasterVersion    = "master-version"
)

// Config configures the plugin.
type Config struct {
	// Clusters by id: how to reach each.
	Clusters map[string]*rest.Config
	// MasterLatency is how long a control plane upgrade takes (default 1s).
	MasterLatency time.Duration
	// DrainTimeout bounds how long the drain of one node may go without a
	// pod leaving it (default 2m).
	DrainTimeout time.Duration
	// NodeReadyTimeout bounds the wait for a replaced node (default 1m).
	NodeReadyTimeout time.Duration
	// Poll is how often evictions and nodes are retried and looked at
	// (default 200ms).
	Poll time.Duration
}

// Plugin operates the clusters of a Config.
type Plugin struct {
	cfg      Config
	clusters map[string]kubernetes.Interface
	ops      *operations
}

var (
	_ pluginsdk.Cluster   = (*Plugin)(nil)
	_ pluginsdk.Describer = (*Plugin)(nil)
	_ pluginsdk.Waiter    = (*Plugin)(nil)
)

// New builds a plugin over the clusters of cfg.
func New(cfg Config) (*Plugin, error) {
	if len(cfg.Clusters) == 0 {
		return nil, fmt.Errorf("local plugin: no cluster: give at least one id and its kubeconfig")
	}
	if cfg.MasterLatency <= 0 {
		cfg.MasterLatency = time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 2 * time.Minute
	}
	if cfg.NodeReadyTimeout <= 0 {
		cfg.NodeReadyTimeout = time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 200 * time.Millisecond
	}
	p := &Plugin{cfg: cfg, clusters: map[string]kubernetes.Interface{}, ops: newOperations()}
	for id, rc := range cfg.Clusters {
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("local plugin: cluster %s: %w", id, err)
		}
		p.clusters[id] = cs
	}
	return p, nil
}

// IDs lists the clusters, sorted.
func (p *Plugin) IDs() []string {
	ids := make([]string, 0, len(p.clusters))
	for id := range p.clusters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (p *Plugin) client(id string) (kubernetes.Interface, error) {
	cs, ok := p.clusters[id]
	if !ok {
		return nil, status.Error(codes.NotFound, fmt.Sprintf("no cluster %q: this plugin serves %v", id, p.IDs()))
	}
	return cs, nil
}

// HealthCheck answers while the plugin runs.
func (p *Plugin) HealthCheck(context.Context) error { return nil }

// operations are the plugin's operations, by id.
type operations struct {
	mu   sync.Mutex
	seq  int
	byID map[string]*operation
}

type operation struct {
	cluster string
	report  pluginsdk.OperationReport
	done    chan struct{}
}

func newOperations() *operations { return &operations{byID: map[string]*operation{}} }

// start runs work in the background as a new operation of the given type.
// work reports progress through set and returns the operation's failure.
func (o *operations) start(cluster, typ string, work func(set func(done, total int32, msg string)) error) pluginsdk.Operation {
	o.mu.Lock()
	o.seq++
	id := fmt.Sprintf("%s-%d-%d", typ, time.Now().UnixNano(), o.seq)
	op := &operation{cluster: cluster, report: pluginsdk.OperationReport{Status: pluginsdk.OperationRunning}, done: make(chan struct{})}
	o.byID[id] = op
	o.mu.Unlock()
	set := func(done, total int32, msg string) {
		o.mu.Lock()
		op.report.Done, op.report.Total, op.report.Message = done, total, msg
		o.mu.Unlock()
	}
	go func() {
		err := work(set)
		o.mu.Lock()
		if err != nil {
			op.report.Status, op.report.Message = pluginsdk.OperationFailed, err.Error()
		} else {
			op.report.Status = pluginsdk.OperationDone
		}
		o.mu.Unlock()
		close(op.done)
	}()
	return pluginsdk.Operation{Type: typ, ID: id}
}

func (o *operations) get(cluster, id string) (*operation, pluginsdk.OperationReport, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	op, ok := o.byID[id]
	if !ok || op.cluster != cluster {
		return nil, pluginsdk.OperationReport{Status: pluginsdk.OperationUnknown}, false
	}
	return op, op.report, true
}

// GetOperationStatus says where an operation is; UNKNOWN for one this
// process did not start.
func (p *Plugin) GetOperationStatus(ctx context.Context, cluster string, op pluginsdk.Operation) (pluginsdk.OperationStatus, error) {
	r, err := p.DescribeOperation(ctx, cluster, op)
	return r.Status, err
}

// DescribeOperation adds the operation's progress and failure message.
func (p *Plugin) DescribeOperation(_ context.Context, cluster string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	_, r, _ := p.ops.get(cluster, op.ID)
	return r, nil
}

// WaitOperation returns when the operation ends or ctx does.
func (p *Plugin) WaitOperation(ctx context.Context, cluster string, op pluginsdk.Operation) (pluginsdk.OperationReport, error) {
	o, r, ok := p.ops.get(cluster, op.ID)
	if !ok {
		return r, nil
	}
	select {
	case <-o.done:
	case <-ctx.Done():
	}
	_, r, _ = p.ops.get(cluster, op.ID)
	return r, nil
}
