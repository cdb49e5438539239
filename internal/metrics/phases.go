package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// phases counts objects by phase at scrape time from what a reconciler
// last saw of each, so an object counts in one phase only: the runs of
// plans, the AppRollouts. Every phase listed is reported, at zero too, so
// a dashboard's series do not come and go.
type phases[P ~string] struct {
	desc *prometheus.Desc
	all  []P
	mu   sync.Mutex
	of   map[string]P
}

func newPhases[P ~string](name, help string, all ...P) *phases[P] {
	return &phases[P]{desc: prometheus.NewDesc(name, help, []string{"phase"}, nil), all: all, of: map[string]P{}}
}

// set records where an object (its key) stands; "" forgets it.
func (c *phases[P]) set(key string, phase P) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if phase == "" {
		delete(c.of, key)
		return
	}
	c.of[key] = phase
}

func (c *phases[P]) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *phases[P]) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	counts := map[P]int{}
	for _, p := range c.of {
		counts[p]++
	}
	c.mu.Unlock()
	for _, p := range c.all {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[p]), string(p))
	}
}
