package sim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// failure tells whether an operation of typ starting on c fails, and
// why. Every rule that matches counts the operation, whichever decides.
func (s *Sim) failure(c *cluster, typ string) (bool, string) {
	if c.failMatches == nil && len(s.cfg.Failures) > 0 {
		c.failMatches = make([]int, len(s.cfg.Failures))
	}
	fail, reason := false, ""
	for i, f := range s.cfg.Failures {
		if (f.Operation != "" && f.Operation != typ) || (f.Cluster != "" && f.Cluster != c.id) {
			continue
		}
		n := c.failMatches[i]
		c.failMatches[i]++
		if !fail && n >= f.After && (f.Times == 0 || n < f.After+f.Times) {
			fail, reason = true, fmt.Sprintf("injected failure (rule %d: %s)", i+1, describeRule(f))
		}
	}
	if !fail && s.cfg.FailureRate > 0 {
		s.rngMu.Lock()
		fail = s.rng.Float64() < s.cfg.FailureRate
		s.rngMu.Unlock()
		if fail {
			reason = fmt.Sprintf("injected failure (failure rate %v)", s.cfg.FailureRate)
		}
	}
	return fail, reason
}

func describeRule(f Failure) string {
	op, cl := f.Operation, f.Cluster
	if op == "" {
		op = "any operation"
	}
	if cl == "" {
		cl = "any cluster"
	}
	s := op + " on " + cl
	if f.After > 0 {
		s += fmt.Sprintf(" after %d", f.After)
	}
	if f.Times > 0 {
		s += fmt.Sprintf(", %d times", f.Times)
	}
	return s
}

// flapping tells whether the cluster is unavailable at now: a function of
// the seed, the cluster and the time window, so nothing runs between
// calls and the same seed flaps the same way.
func (s *Sim) flapping(clusterID string, now time.Time) bool {
	f := s.cfg.Flaps
	elapsed := now.Sub(s.started)
	if !f.enabled() || elapsed < 0 {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(clusterID))
	window := uint64(elapsed / f.Every)
	r := rand.New(rand.NewPCG(s.cfg.Seed^h.Sum64(), window))
	if r.Float64() >= f.Probability {
		return false
	}
	offset := time.Duration(r.Int64N(int64(f.Every-f.Down) + 1))
	in := elapsed % f.Every
	return in >= offset && in < offset+f.Down
}
