package server

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The figures of the failed-login limits.
//
// Per address: ten failures at once, then one every 10 s, so a user who
// mistypes a few times is not slowed, and a guesser elsewhere does not
// lock the admin out.
//
// Across all addresses: thirty failures at once, then one every 2 s
// (at most 43,200 guesses a day, however many addresses a guesser
// cycles through: an IPv6 /64 is 2^64 of them). Against the shortest
// password allowed (8 characters) that leaves a random one out of reach
// for years. While this budget is spent nobody logs in (a correct
// password too, for a few seconds): the price of a bound that does not
// depend on telling addresses apart. Successes cost nothing.
const (
	hostBurst   = 10
	hostEvery   = 10 * time.Second
	globalBurst = 30
	globalEvery = 2 * time.Second
	// maxHosts bounds the per-address table; past it the address unseen
	// the longest is forgotten (the global budget still bounds it).
	maxHosts = 4096
)

// loginLimits slow password guessing per client address and across all.
type loginLimits struct {
	mu     sync.Mutex
	byHost map[string]*list.Element // of *hostLimit
	// recent orders byHost's entries, the latest used first.
	recent *list.List
	global budget
}

// budget is a bucket of failures, and the attempts being checked now:
// those count as spent until they end, so parallel guesses cannot all
// pass before any failure is counted.
type budget struct {
	failures *rate.Limiter
	inFlight int
}

func (b *budget) spent() bool { return b.failures.Tokens()-float64(b.inFlight) < 1 }

// hostLimit is one address's budget.
type hostLimit struct {
	host string
	budget
}

// limitedBy says which budget refused an attempt.
type limitedBy int

const (
	notLimited limitedBy = iota
	limitedHost
	limitedGlobal
)

func newLoginLimits() *loginLimits {
	return &loginLimits{byHost: map[string]*list.Element{}, recent: list.New(),
		global: budget{failures: rate.NewLimiter(rate.Every(globalEvery), globalBurst)}}
}

// begin starts an attempt from host: refused (by whichever budget is
// spent) or ok, and then done ends it, counting a failure.
func (l *loginLimits) begin(host string) (refused limitedBy, done func(failed bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.host(host)
	switch {
	case h.spent():
		return limitedHost, nil
	case l.global.spent():
		return limitedGlobal, nil
	}
	h.inFlight++
	l.global.inFlight++
	return notLimited, func(failed bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		h.inFlight--
		l.global.inFlight--
		if failed {
			h.failures.Allow()
			l.global.failures.Allow()
		}
	}
}

// host returns host's budget, made on first use, and marks it used.
func (l *loginLimits) host(host string) *hostLimit {
	if e, ok := l.byHost[host]; ok {
		l.recent.MoveToFront(e)
		return e.Value.(*hostLimit)
	}
	if l.recent.Len() >= maxHosts {
		oldest := l.recent.Back()
		l.recent.Remove(oldest)
		delete(l.byHost, oldest.Value.(*hostLimit).host)
	}
	h := &hostLimit{host: host, budget: budget{failures: rate.NewLimiter(rate.Every(hostEvery), hostBurst)}}
	l.byHost[host] = l.recent.PushFront(h)
	return h
}
