//go:build bench

package apps

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// phases follows every AppRollout through one watch: its last state, the
// phase changes since reset, and when its status first caught up with
// its generation after reset (the controller's reaction).
type phases struct {
	mu      sync.Mutex
	last    map[types.NamespacedName]*v1alpha1.AppRollout
	moved   map[types.NamespacedName]int
	reactAt map[types.NamespacedName]time.Time
	gen     map[types.NamespacedName]int64
}

func watchPhases(t *testing.T, ctx context.Context, kc client.WithWatch) *phases {
	p := &phases{last: map[types.NamespacedName]*v1alpha1.AppRollout{}}
	p.reset()
	w, err := kc.Watch(ctx, &v1alpha1.AppRolloutList{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			a, ok := ev.Object.(*v1alpha1.AppRollout)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			p.see(a)
		}
	}()
	return p
}

func (p *phases) see(a *v1alpha1.AppRollout) {
	k := client.ObjectKeyFromObject(a)
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev := p.last[k]; prev != nil && prev.Status.Phase != a.Status.Phase {
		p.moved[k]++
	}
	if g, ok := p.gen[k]; !ok || a.Generation > g {
		p.gen[k] = a.Generation
	}
	if _, done := p.reactAt[k]; !done && a.Generation > 1 && a.Status.ObservedGeneration == a.Generation {
		p.reactAt[k] = time.Now()
	}
	p.last[k] = a
}

func (p *phases) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.moved, p.reactAt, p.gen = map[types.NamespacedName]int{}, map[types.NamespacedName]time.Time{}, map[types.NamespacedName]int64{}
}

func (p *phases) changes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.moved {
		n += c
	}
	return n
}

func (p *phases) changedOutside(in []types.NamespacedName) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	keep := map[types.NamespacedName]bool{}
	for _, k := range in {
		keep[k] = true
	}
	var out []string
	for k, n := range p.moved {
		if !keep[k] && n > 0 {
			out = append(out, k.String())
		}
	}
	return out
}

func (p *phases) reacted(k types.NamespacedName) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.reactAt[k]
	return at, ok
}

// waitAll waits until n rollouts satisfy ok.
func (p *phases) waitAll(t *testing.T, ctx context.Context, n int, ok func(*v1alpha1.AppRollout) bool) {
	for {
		p.mu.Lock()
		got := 0
		for _, a := range p.last {
			if ok(a) {
				got++
			}
		}
		p.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d rollouts got there before the bench's deadline", got, n)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
