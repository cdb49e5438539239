package controller

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// drive is one plan's run being moved by this process.
type drive struct {
	act Act
	// generation is the plan's generation the drive runs: the status
	// describes no newer one until the drive ends.
	generation int64

	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// run is the run as last saved by the drive: status follows it
	// without reading the record back.
	run *v1alpha1.UpgradeRun
}

func (d *drive) lastRun() *v1alpha1.UpgradeRun {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.run
}

func (d *drive) setRun(r *v1alpha1.UpgradeRun) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.run = r
}

// drives is what this process drives and what it could not start, by plan.
type drives struct {
	mu      sync.Mutex
	running map[types.NamespacedName]*drive
	blocked map[types.NamespacedName]*Blocked
}

func newDrives() *drives {
	return &drives{running: map[types.NamespacedName]*drive{}, blocked: map[types.NamespacedName]*Blocked{}}
}

func (ds *drives) get(k types.NamespacedName) *drive {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.running[k]
}

// add registers a drive; false when the plan has one already.
func (ds *drives) add(k types.NamespacedName, d *drive) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.running[k] != nil {
		return false
	}
	ds.running[k] = d
	return true
}

func (ds *drives) remove(k types.NamespacedName, d *drive) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.running[k] == d {
		delete(ds.running, k)
	}
}

// stop cancels the plan's drive and waits until it has saved where it
// stopped.
func (ds *drives) stop(k types.NamespacedName) {
	d := ds.get(k)
	if d == nil {
		return
	}
	d.cancel()
	<-d.done
}

func (ds *drives) blockedOf(k types.NamespacedName) *Blocked {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.blocked[k]
}

// block records a start that could not begin; attempts count up while
// the generation and the reason stay the same. It tells whether this is
// news (the first attempt, or another message): only news makes an event,
// so a plan retried every few minutes does not flood its events.
func (ds *drives) block(k types.NamespacedName, b Blocked) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	b.Attempts = 1
	prev := ds.blocked[k]
	if prev != nil && prev.Generation == b.Generation && prev.Reason == b.Reason {
		b.Attempts = prev.Attempts + 1
	}
	ds.blocked[k] = &b
	return prev == nil || prev.Generation != b.Generation || prev.Reason != b.Reason || prev.Message != b.Message
}

// unblock records that the plan's run is not blocked: this process saw
// it start, or end. The record stays (nil), so a Blocked its conditions
// kept from before no longer counts (known).
func (ds *drives) unblock(k types.NamespacedName) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.blocked[k] = nil
}

// known is the plan's blocked start as this process knows it; ok is false
// when it never tried the plan (then its conditions tell, after a
// restart).
func (ds *drives) known(k types.NamespacedName) (b *Blocked, ok bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	b, ok = ds.blocked[k]
	return b, ok
}
