package kube

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// Cache is the informers a run's waits share: one per resource and
// namespace, started by the first wait that needs it and kept until Close.
// A rollout's step, the gate after it, and every later wait in the same
// namespace read one list and one watch instead of starting their own.
//
// Only namespaced resources are shared. A wait on a cluster-scoped kind
// (a CRD, a node) keeps an informer of its own that lists just its
// objects: sharing would mean caching every object of the kind, and a
// cluster's CRDs can weigh hundreds of megabytes.
//
// A shared informer may lag a write this process just made by the time an
// event takes to arrive, so a wait on it first learns how recent its
// objects must be (see fence.go): from the write it follows, from the
// Answers its caller gave it, or else from a consistent list.
type Cache struct {
	dyn  dynamic.Interface
	ctx  context.Context
	stop context.CancelFunc

	mu     sync.Mutex
	shared map[cacheKey]*sharedInformer
	// written is the run's write answers of cluster-scoped objects
	// (answers.go).
	written map[writtenKey]*unstructured.Unstructured
}

// cacheKey names one shared informer. kind tells the objects' Go type
// apart: the pods a Deployment's verdict reads are typed, a wait on pods
// themselves reads them unstructured.
type cacheKey struct {
	gvr  schema.GroupVersionResource
	ns   string
	kind string
}

// sharedInformer is one informer and the waits it wakes.
type sharedInformer struct {
	inf  cache.SharedIndexInformer
	mu   sync.Mutex
	subs map[*session]bool
	// lastErr is the reflector's last error since the last event: a wait
	// that joins while the informer is failing (forbidden, say) is told
	// at once instead of at the reflector's next retry.
	lastErr error
}

// NewCache builds a Cache; Close stops its informers.
func NewCache(dyn dynamic.Interface) *Cache {
	ctx, stop := context.WithCancel(context.Background())
	return &Cache{dyn: dyn, ctx: ctx, stop: stop, shared: map[cacheKey]*sharedInformer{}}
}

// Close stops every informer of the cache. Waits still running on them
// see no more events; close the cache once the run's waits are over.
func (c *Cache) Close() { c.stop() }

// join subscribes s to the informer of gvr in ns, starting it on first
// use, and returns it. s is woken by its events and told its errors until
// it leaves.
func (c *Cache) join(s *session, gvr schema.GroupVersionResource, ns, kind string, transform cache.TransformFunc) (*informer, error) {
	key := cacheKey{gvr: gvr, ns: ns, kind: kind}
	c.mu.Lock()
	si := c.shared[key]
	if si == nil {
		var err error
		if si, err = c.start(key, transform); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		c.shared[key] = si
	}
	c.mu.Unlock()

	si.mu.Lock()
	si.subs[s] = true
	lastErr := si.lastErr
	si.mu.Unlock()
	s.joined = append(s.joined, si)
	if lastErr != nil {
		s.apiError(gvr.Resource, lastErr)
	}
	go func() {
		if WaitSynced(s.ctx, si.inf.HasSynced) {
			s.poke()
		}
	}()
	return &informer{si.inf}, nil
}

// reportDecodeError tells the waits on a shared informer about an object
// it could not convert.
func (c *Cache) reportDecodeError(gvr schema.GroupVersionResource, ns, kind string, err error) {
	c.mu.Lock()
	si := c.shared[cacheKey{gvr: gvr, ns: ns, kind: kind}]
	c.mu.Unlock()
	if si != nil {
		si.each(func(s *session) { s.decodeError(err) })
	}
}

// leave unsubscribes s from every informer it joined.
func (s *session) leave() {
	for _, si := range s.joined {
		si.mu.Lock()
		delete(si.subs, s)
		si.mu.Unlock()
	}
	s.joined = nil
}

// each calls f for every wait subscribed now.
func (si *sharedInformer) each(f func(*session)) {
	si.mu.Lock()
	subs := make([]*session, 0, len(si.subs))
	for s := range si.subs {
		subs = append(subs, s)
	}
	si.mu.Unlock()
	for _, s := range subs {
		f(s)
	}
}

func (c *Cache) start(key cacheKey, transform cache.TransformFunc) (*sharedInformer, error) {
	lw := listWatch(c.dyn.Resource(key.gvr).Namespace(key.ns), func(*metav1.ListOptions) {}, false)
	si := &sharedInformer{subs: map[*session]bool{}}
	si.inf = cache.NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{},
		cache.SharedIndexInformerOptions{ObjectDescription: key.gvr.String() + " in " + key.ns})
	if transform == nil {
		transform = withoutManagedFields
	}
	if err := si.inf.SetTransform(transform); err != nil {
		return nil, fmt.Errorf("watch %s: %w", key.gvr.Resource, err)
	}
	if err := si.inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		if !isRoutine(err) {
			si.mu.Lock()
			si.lastErr = err
			si.mu.Unlock()
		}
		si.each(func(s *session) { s.apiError(key.gvr.Resource, err) })
	}); err != nil {
		return nil, fmt.Errorf("watch %s: %w", key.gvr.Resource, err)
	}
	wake := func() {
		si.mu.Lock()
		si.lastErr = nil // an event: the informer works again
		si.mu.Unlock()
		si.each(func(s *session) { s.poke() })
	}
	if _, err := si.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { wake() },
		UpdateFunc: func(any, any) { wake() },
		DeleteFunc: func(any) { wake() },
	}); err != nil {
		return nil, fmt.Errorf("watch %s: %w", key.gvr.Resource, err)
	}
	go si.inf.RunWithContext(c.ctx)
	return si, nil
}

// withoutManagedFields drops what no verdict reads and a namespace's worth
// of objects would otherwise keep in memory for the whole run.
func withoutManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}
