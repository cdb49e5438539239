package lease

import (
	"testing"
)

// A lease taken straight from a released one that was observed is told
// apart from one that another process took (and released) in between,
// one that was held when observed, and one that was not there.
func TestTakenFromTellsWhetherAnyoneHeldTheLeaseSinceItWasObserved(t *testing.T) {
	t.Parallel()
	f := setup(t)
	observe := func() Observation {
		t.Helper()
		o, err := Observe(f.ctx, f.cs, f.ns, "")
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	take := func(id Identity) *Held {
		t.Helper()
		h, err := Acquire(f.ctx, f.cs, f.config(id))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	absent := observe()
	first := take(alice())
	if absent.Free() || first.TakenFrom(absent) {
		t.Error("a lease that was not there when observed counts as taken straight from it")
	}
	held := observe()
	first.Release()
	if held.Free() {
		t.Error("a held lease observed as free")
	}

	released := observe()
	if !released.Free() {
		t.Fatal("a released lease observed as held")
	}
	straight := take(bob())
	if !straight.TakenFrom(released) {
		t.Error("a lease taken straight from the released one observed does not count as such")
	}
	if straight.TakenFrom(held) {
		t.Error("a lease observed while held counts as taken straight from that observation")
	}
	straight.Release()

	before := observe()
	take(alice()).Release() // another process, in between
	after := take(bob())
	defer after.Release()
	if after.TakenFrom(before) {
		t.Error("a lease another process took and released since it was observed counts as taken straight from that observation")
	}
}
