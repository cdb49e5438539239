package server

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// loginLimits slow password guessing per client address: ten failures
// at once, then one every 10 s. Per address, so a guesser elsewhere does
// not lock the admin out.
type loginLimits struct {
	mu     sync.Mutex
	byHost map[string]*hostLimit
}

// hostLimit is one address's budget of failures, and its attempts being
// checked now: those count as spent until they end, so parallel guesses
// cannot all pass before any failure is counted.
type hostLimit struct {
	failures *rate.Limiter
	inFlight int
}

// maxHosts bounds the table; past it, it starts afresh (a guesser
// cycling addresses gains a fresh budget per address anyway).
const maxHosts = 4096

func newLoginLimits() *loginLimits { return &loginLimits{byHost: map[string]*hostLimit{}} }

// begin starts an attempt from host: false when its budget is spent.
// done ends it, counting a failure.
func (l *loginLimits) begin(host string) (ok bool, done func(failed bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, found := l.byHost[host]
	if !found {
		if len(l.byHost) >= maxHosts {
			l.byHost = map[string]*hostLimit{}
		}
		h = &hostLimit{failures: rate.NewLimiter(rate.Every(10*time.Second), 10)}
		l.byHost[host] = h
	}
	if h.failures.Tokens()-float64(h.inFlight) < 1 {
		return false, nil
	}
	h.inFlight++
	return true, func(failed bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		h.inFlight--
		if failed {
			h.failures.Allow()
		}
	}
}
