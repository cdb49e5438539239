package fleet

import (
	"sync"
	"time"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// StatusCache keeps the clusters' statuses read by earlier steps, for the
// availability budget. A status older than its TTL is read again before
// the budget is judged on it: the multicluster operator reads every other
// cluster before each service out, which is a fleet's worth of calls per
// cluster; within the TTL one read serves every cluster taken out.
type StatusCache struct {
	TTL time.Duration
	mu  sync.Mutex
	at  map[string]cached
}

type cached struct {
	s  pluginsdk.ClusterStatus
	at time.Time
}

// NewStatusCache returns a cache whose entries serve for ttl.
func NewStatusCache(ttl time.Duration) *StatusCache {
	return &StatusCache{TTL: ttl, at: map[string]cached{}}
}

func (c *StatusCache) put(id string, s pluginsdk.ClusterStatus, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at[id] = cached{s, now}
}

// stale fills o.Statuses from the fresh entries and returns the clusters
// that must be read.
func (c *StatusCache) stale(ids []string, o *Observed, now time.Time) []string {
	var out []string
	if c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	for _, id := range ids {
		if _, ok := o.Statuses[id]; ok {
			continue
		}
		if c != nil {
			if e, ok := c.at[id]; ok && now.Sub(e.at) < c.TTL {
				o.Statuses[id] = e.s
				continue
			}
		}
		out = append(out, id)
	}
	return out
}
