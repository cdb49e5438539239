package server

import (
	"fmt"
	"sync"
	"testing"
)

// Ten failures from one address spend its budget, parallel attempts
// included; another address keeps its own; a success costs nothing.
func TestLoginLimits(t *testing.T) {
	l := newLoginLimits()
	for range 3 {
		refused, done := l.begin("10.0.0.1")
		if refused != notLimited {
			t.Fatal("a success was refused")
		}
		done(false)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	passed := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refused, done := l.begin("10.0.0.1")
			if refused != notLimited {
				return
			}
			mu.Lock()
			passed++
			mu.Unlock()
			done(true)
		}()
	}
	wg.Wait()
	if passed > hostBurst {
		t.Errorf("%d parallel failing attempts passed, want at most %d", passed, hostBurst)
	}
	if refused, _ := l.begin("10.0.0.1"); refused != limitedHost {
		t.Error("an attempt after ten failures passed")
	}
	if refused, _ := l.begin("10.0.0.2"); refused != notLimited {
		t.Error("another address was locked out")
	}
}

// A guesser whose every attempt comes from a new address (IPv6 makes
// that cheap) is bounded by the global budget, not only by the table's
// size; a login while that budget is left still works.
func TestLoginLimitsAcrossAddresses(t *testing.T) {
	l := newLoginLimits()
	passed := 0
	for i := range 10 * maxHosts {
		refused, done := l.begin(fmt.Sprintf("2001:db8::%x", i))
		if refused != notLimited {
			if refused != limitedGlobal {
				t.Fatalf("attempt %d from a new address: refused by %d, want the global budget", i, refused)
			}
			continue
		}
		passed++
		done(true)
	}
	// The burst, and what refills while the loop runs; without a bound
	// across addresses all 40,960 would pass.
	if passed > 100 || passed < globalBurst {
		t.Errorf("%d of %d failing attempts from distinct addresses passed, want about %d", passed, 10*maxHosts, globalBurst)
	}
	if len(l.byHost) > maxHosts || l.recent.Len() > maxHosts {
		t.Errorf("the table holds %d addresses, more than %d", len(l.byHost), maxHosts)
	}
}

// The table forgets the address unseen the longest, not every address:
// a guesser cycling addresses does not wipe a known guesser's budget.
func TestLoginLimitsEvictOldest(t *testing.T) {
	l := newLoginLimits()
	l.global.failures.SetBurst(1 << 30) // this test is about the table
	for range hostBurst {
		_, done := l.begin("10.0.0.1")
		done(true)
	}
	for i := range maxHosts - 1 {
		_, done := l.begin(fmt.Sprintf("10.1.%d.%d", i/256, i%256))
		done(false)
	}
	// 10.0.0.1 is the oldest now; touching it keeps it.
	if refused, _ := l.begin("10.0.0.1"); refused != limitedHost {
		t.Fatal("the guesser's budget was not spent")
	}
	_, done := l.begin("10.2.0.0") // evicts 10.1.0.0, the oldest now
	done(false)
	if refused, _ := l.begin("10.0.0.1"); refused != limitedHost {
		t.Error("a new address wiped the guesser's spent budget")
	}
	if _, ok := l.byHost["10.1.0.0"]; ok {
		t.Error("the address unseen the longest was kept")
	}
}
