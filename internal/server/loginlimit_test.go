package server

import (
	"sync"
	"testing"
)

// Ten failures from one address spend its budget, parallel attempts
// included; another address keeps its own; a success costs nothing.
func TestLoginLimits(t *testing.T) {
	l := newLoginLimits()
	for range 3 {
		ok, done := l.begin("10.0.0.1")
		if !ok {
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
			ok, done := l.begin("10.0.0.1")
			if !ok {
				return
			}
			mu.Lock()
			passed++
			mu.Unlock()
			done(true)
		}()
	}
	wg.Wait()
	if passed > 10 {
		t.Errorf("%d parallel failing attempts passed, want at most 10", passed)
	}
	if ok, _ := l.begin("10.0.0.1"); ok {
		t.Error("an attempt after ten failures passed")
	}
	if ok, _ := l.begin("10.0.0.2"); !ok {
		t.Error("another address was locked out")
	}
}
