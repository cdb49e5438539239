// Package sim is an ops plugin of simulated clusters, in memory, for
// tests and benchmarks of the fleet controller: operations take the
// configured latency (on the configured clock), fail as configured, and
// follow the rules a cloud provider enforces (one upgrade at a time per
// cluster; no node pool newer than its control plane).
//
// It holds thousands of clusters cheaply: no goroutine per cluster or
// operation. An operation is its start and end time; its effect is
// applied the next time anything looks at its cluster after it ended.
package sim

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Sim is the plugin: it implements pluginsdk.Cluster, Describer, Waiter,
// Reverter and Finder. It is safe for concurrent use.
type Sim struct {
	cfg      Config
	clock    clock.Clock
	started  time.Time
	ids      []string
	clusters map[string]*cluster // fixed after New: read without a lock

	opSeq      atomic.Uint64
	totalCalls atomic.Int64

	rngMu sync.Mutex
	rng   *rand.Rand // jitter and FailureRate
}

var (
	_ pluginsdk.Cluster   = (*Sim)(nil)
	_ pluginsdk.Describer = (*Sim)(nil)
	_ pluginsdk.Waiter    = (*Sim)(nil)
	_ pluginsdk.Reverter  = (*Sim)(nil)
	_ pluginsdk.Finder    = (*Sim)(nil)
)

// New is a simulation of the clusters cfg describes.
func New(cfg Config) (*Sim, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	specs, err := cfg.clusterSpecs()
	if err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	s := &Sim{
		cfg:      cfg,
		clock:    cfg.Clock,
		started:  cfg.Clock.Now(),
		clusters: make(map[string]*cluster, len(specs)),
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0x5e7)),
	}
	for _, spec := range specs {
		s.ids = append(s.ids, spec.ID)
		s.clusters[spec.ID] = newCluster(spec)
	}
	for _, f := range cfg.Failures {
		if _, ok := s.clusters[f.Cluster]; f.Cluster != "" && !ok {
			return nil, fmt.Errorf("sim: failure of %s on cluster %s: no such cluster (%s)", f.Operation, f.Cluster, s.idRange())
		}
	}
	return s, nil
}

// IDs are the clusters' IDs, in the order given (or made).
func (s *Sim) IDs() []string { return append([]string(nil), s.ids...) }

// Calls is how many plugin calls named the cluster.
func (s *Sim) Calls(clusterID string) int {
	c, ok := s.clusters[clusterID]
	if !ok {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// TotalCalls is how many plugin calls the simulation answered, HealthCheck
// and calls naming unknown clusters included.
func (s *Sim) TotalCalls() int { return int(s.totalCalls.Load()) }

// lock counts a call on the cluster and returns it locked, with its
// operations settled up to now; the caller unlocks it.
func (s *Sim) lock(clusterID string) (*cluster, time.Time, error) {
	s.totalCalls.Add(1)
	c, ok := s.clusters[clusterID]
	if !ok {
		return nil, time.Time{}, status.Errorf(codes.NotFound, "cluster %q is not simulated (%s)", clusterID, s.idRange())
	}
	c.mu.Lock()
	c.calls++
	now := s.clock.Now()
	c.settle(now)
	return c, now, nil
}

// idRange names the clusters for an error message.
func (s *Sim) idRange() string {
	switch len(s.ids) {
	case 1:
		return "the one cluster is " + s.ids[0]
	case 2:
		return "the clusters are " + s.ids[0] + " and " + s.ids[1]
	}
	return fmt.Sprintf("the clusters are %s … %s", s.ids[0], s.ids[len(s.ids)-1])
}

// latency is how long an operation of typ runs, jitter included.
func (s *Sim) latency(typ string) time.Duration {
	d := s.cfg.Latency[typ]
	if s.cfg.Jitter > 0 {
		s.rngMu.Lock()
		d += time.Duration(s.rng.Int64N(int64(s.cfg.Jitter)))
		s.rngMu.Unlock()
	}
	return d
}

func (s *Sim) newOperationID() string {
	return fmt.Sprintf("sim-op-%d", s.opSeq.Add(1))
}
