package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// runWatch is the server's one watch of the runs namespace's
// UpgradeRuns: every status read and every event stream is served from
// its cache, whatever the number of clients.
type runWatch struct {
	informer cache.SharedIndexInformer
	mu       sync.Mutex
	subs     map[*subscription]struct{}
}

// subscription receives the runs of one name as they change.
type subscription struct {
	name string
	ch   chan *v1alpha1.UpgradeRun
}

// startRunWatch lists and watches the runs until ctx ends, and returns
// once the cache holds the list.
func startRunWatch(ctx context.Context, cfg *rest.Config, namespace string) (*runWatch, error) {
	rc, err := runstore.RESTClient(cfg)
	if err != nil {
		return nil, err
	}
	lw := cache.NewListWatchFromClient(rc, "upgraderuns", namespace, fields.Everything())
	w := &runWatch{
		informer: cache.NewSharedIndexInformer(lw, &v1alpha1.UpgradeRun{}, 0, cache.Indexers{}),
		subs:     map[*subscription]struct{}{},
	}
	publish := func(obj any) {
		if r, ok := obj.(*v1alpha1.UpgradeRun); ok {
			w.publish(r)
		}
	}
	if _, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    publish,
		UpdateFunc: func(_, obj any) { publish(obj) },
	}); err != nil {
		return nil, err
	}
	go w.informer.Run(ctx.Done())
	synced, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(synced.Done(), w.informer.HasSynced) {
		return nil, fmt.Errorf("list the runs (upgraderuns in %s): not done within a minute", namespace)
	}
	return w, nil
}

// get returns the run as last seen, or nil.
func (w *runWatch) get(namespace, name string) *v1alpha1.UpgradeRun {
	obj, ok, err := w.informer.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil
	}
	return obj.(*v1alpha1.UpgradeRun)
}

// subscribe sends every change of the run name until cancel. The
// channel keeps the newest change only when its reader lags: a stream
// needs the run as it is, not every state it went through.
func (w *runWatch) subscribe(name string) (<-chan *v1alpha1.UpgradeRun, func()) {
	sub := &subscription{name: name, ch: make(chan *v1alpha1.UpgradeRun, 16)}
	w.mu.Lock()
	w.subs[sub] = struct{}{}
	w.mu.Unlock()
	return sub.ch, func() {
		w.mu.Lock()
		delete(w.subs, sub)
		w.mu.Unlock()
	}
}

func (w *runWatch) publish(r *v1alpha1.UpgradeRun) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for sub := range w.subs {
		if sub.name != r.Name {
			continue
		}
		select {
		case sub.ch <- r:
		default: // full: drop the oldest, keep the newest
			select {
			case <-sub.ch:
			default:
			}
			sub.ch <- r
		}
	}
}
