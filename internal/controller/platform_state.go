package controller

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// platformDrive is one PlatformUpgrade's hops being driven by this
// process, and what it has learnt: the status follows it.
type platformDrive struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	progress PlatformProgress
	// run is the running hop's run name, for an approval.
	run string
	// solvedFrom is where the last solved path starts.
	solvedFrom string
	// ended: the drive is over; progress holds how it ended until the
	// status says so.
	ended bool
}

func (d *platformDrive) snapshot() (PlatformProgress, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.progress
	p.Path = append([]string(nil), p.Path...)
	p.Hops = append([]v1alpha1.HopStatus(nil), p.Hops...)
	return p, d.ended
}

func (d *platformDrive) update(f func(p *PlatformProgress)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(&d.progress)
}

// setHop records a hop's run as it is now.
func (d *platformDrive) setHop(h v1alpha1.HopStatus) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.run = h.Run
	if h.From == "" {
		for i, v := range d.progress.Path {
			if v == h.To {
				h.From = d.solvedFrom
				if i > 0 {
					h.From = d.progress.Path[i-1]
				}
			}
		}
	}
	for i := range d.progress.Hops {
		if d.progress.Hops[i].Run == h.Run {
			if h.From == "" {
				h.From = d.progress.Hops[i].From
			}
			d.progress.Hops[i] = h
			return
		}
	}
	d.progress.Hops = append(d.progress.Hops, h)
}

func (d *platformDrive) runName() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.run
}

// platformDrives are this process's drives and blocked starts, by
// PlatformUpgrade.
type platformDrives struct {
	mu     sync.Mutex
	drives map[types.NamespacedName]*platformDrive
	// blocked reuses the UpgradePlan drives' bookkeeping of blocked starts.
	blocked *drives
}

func newPlatformDrives() *platformDrives {
	return &platformDrives{drives: map[types.NamespacedName]*platformDrive{}, blocked: newDrives()}
}

func (ds *platformDrives) get(k types.NamespacedName) *platformDrive {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.drives[k]
}

// start registers a new drive unless one is moving already; an ended
// one is replaced.
func (ds *platformDrives) start(k types.NamespacedName, d *platformDrive) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if old := ds.drives[k]; old != nil {
		old.mu.Lock()
		ended := old.ended
		old.mu.Unlock()
		if !ended {
			return false
		}
	}
	ds.drives[k] = d
	return true
}

// forget drops an ended drive once the status holds how it ended.
func (ds *platformDrives) forget(k types.NamespacedName, d *platformDrive) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.drives[k] == d {
		delete(ds.drives, k)
	}
}

// stop cancels the drive and waits until its hop is saved.
func (ds *platformDrives) stop(k types.NamespacedName) {
	d := ds.get(k)
	if d == nil {
		return
	}
	d.cancel()
	<-d.done
}
