package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/clock"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// The types of the operations the simulation starts (Operation.Type), and
// the keys of Config.Latency.
const (
	OpServiceIn       = "ServiceIn"
	OpServiceOut      = "ServiceOut"
	OpUpgradeMaster   = "UpgradeMaster"
	OpUpgradeNodePool = "UpgradeNodePool"
	OpRevertCluster   = "RevertCluster"
)

// OperationTypes are the operation types, in the order above.
func OperationTypes() []string {
	return []string{OpServiceIn, OpServiceOut, OpUpgradeMaster, OpUpgradeNodePool, OpRevertCluster}
}

// Defaults of Config.
const (
	DefaultNodePools = 2
	DefaultVersion   = "1.31.0"
)

// Config describes the simulated clusters and how their operations
// behave. The zero value is one cluster, sim-0001, whose operations end
// at once.
type Config struct {
	// Clusters are the clusters, as given. When empty, Count clusters are
	// made: sim-0001, sim-0002, ... each with NodePools node pools
	// (pool-1, pool-2, ...) at Version, in service.
	Clusters  []ClusterSpec
	Count     int
	NodePools int    // default DefaultNodePools
	Version   string // default DefaultVersion

	// Latency is how long each type of operation runs (OpServiceIn, ...);
	// a type not listed ends at once. Jitter adds up to that much more,
	// at random, to each operation.
	Latency map[string]time.Duration
	Jitter  time.Duration

	// Failures make matching operations end FAILED (without effect).
	Failures []Failure
	// FailureRate is the probability that any operation fails.
	FailureRate float64

	// Flaps make clusters unavailable (isAvailable false) now and then.
	Flaps Flaps

	// Seed makes Jitter, FailureRate and Flaps repeatable.
	Seed uint64

	// Clock is the simulation's time (default the real clock); tests
	// use k8s.io/utils/clock/testing's FakeClock.
	Clock clock.Clock
}

// ClusterSpec is one simulated cluster as it starts.
type ClusterSpec struct {
	ID        string
	Master    string
	NodePools []pluginsdk.NodePoolVersion
	Service   pluginsdk.ServiceState
}

// Failure is a rule: operations of type Operation on cluster Cluster fail
// ("" matches any), except the first After that match on each cluster;
// with Times, only that many fail after those.
type Failure struct {
	Operation string
	Cluster   string
	After     int
	Times     int
}

// Flaps: time since the simulation began is cut into windows of Every; in
// each window, each cluster is unavailable for Down, at a random offset,
// with probability Probability.
type Flaps struct {
	Every       time.Duration
	Down        time.Duration
	Probability float64
}

func (f Flaps) enabled() bool { return f.Probability > 0 && f.Down > 0 && f.Every > 0 }

// clusterSpecs are the clusters c asks for, validated.
func (c Config) clusterSpecs() ([]ClusterSpec, error) {
	specs := c.Clusters
	if len(specs) == 0 {
		n, pools, v := max(c.Count, 1), c.NodePools, c.Version
		if pools <= 0 {
			pools = DefaultNodePools
		}
		if v == "" {
			v = DefaultVersion
		}
		specs = make([]ClusterSpec, n)
		for i := range specs {
			specs[i] = ClusterSpec{ID: fmt.Sprintf("sim-%04d", i+1), Master: v}
			for p := 1; p <= pools; p++ {
				specs[i].NodePools = append(specs[i].NodePools, pluginsdk.NodePoolVersion{ID: fmt.Sprintf("pool-%d", p), Version: v})
			}
		}
	}
	seen := map[string]bool{}
	for _, s := range specs {
		if s.ID == "" {
			return nil, errors.New("sim: a cluster without an ID")
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("sim: cluster %s given twice", s.ID)
		}
		seen[s.ID] = true
		master, err := parseVersion(s.Master)
		if err != nil {
			return nil, fmt.Errorf("sim: cluster %s: master %w", s.ID, err)
		}
		for _, p := range s.NodePools {
			pv, err := parseVersion(p.Version)
			if err != nil {
				return nil, fmt.Errorf("sim: cluster %s: node pool %s: %w", s.ID, p.ID, err)
			}
			if pv.GreaterThan(master) {
				return nil, fmt.Errorf("sim: cluster %s: node pool %s at %s is newer than its control plane at %s", s.ID, p.ID, p.Version, s.Master)
			}
		}
	}
	return specs, nil
}

func (c Config) validate() error {
	for typ, d := range c.Latency {
		if !slices.Contains(OperationTypes(), typ) {
			return fmt.Errorf("sim: latency of %q: not an operation type (%v)", typ, OperationTypes())
		}
		if d < 0 {
			return fmt.Errorf("sim: latency of %s is negative (%v)", typ, d)
		}
	}
	if c.Jitter < 0 {
		return fmt.Errorf("sim: jitter is negative (%v)", c.Jitter)
	}
	for _, f := range c.Failures {
		if f.Operation != "" && !slices.Contains(OperationTypes(), f.Operation) {
			return fmt.Errorf("sim: failure of %q: not an operation type (%v)", f.Operation, OperationTypes())
		}
		if f.After < 0 || f.Times < 0 {
			return fmt.Errorf("sim: failure of %s on %s: After and Times count operations, from 0", f.Operation, f.Cluster)
		}
	}
	if c.FailureRate < 0 || c.FailureRate > 1 {
		return fmt.Errorf("sim: failure rate %v: give a probability, from 0 to 1", c.FailureRate)
	}
	if f := c.Flaps; f.Probability < 0 || f.Probability > 1 || f.Down < 0 || f.Every < 0 || (f.enabled() && f.Down > f.Every) {
		return fmt.Errorf("sim: flaps %+v: Probability from 0 to 1, and Down no longer than Every", f)
	}
	return nil
}

// parseVersion reads a Kubernetes version (1.31.2, v1.31.2,
// 1.31.2-gke.1000).
func parseVersion(s string) (*version.Version, error) {
	v, err := version.ParseGeneric(s)
	if err != nil {
		return nil, fmt.Errorf("version %q: write it as 1.31.2", s)
	}
	return v, nil
}
