package kube

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// CachedMeta returns the UID and resourceVersion of the named object as
// the run's shared informer of its resource and namespace holds it:
// known is false when there is no such informer, its first list is not
// in or its watch is failing; found false when the informer does not
// hold the object. It is the object as it was a moment ago.
func (w *Waiter) CachedMeta(gvr schema.GroupVersionResource, ns, name string) (uid types.UID, resourceVersion string, found, known bool) {
	if w.cache == nil || ns == "" {
		return "", "", false, false
	}
	si := w.cache.working(cacheKey{gvr: gvr, ns: ns})
	if si == nil {
		return "", "", false, false
	}
	obj, exists, err := si.inf.GetStore().GetByKey(ns + "/" + name)
	if err != nil {
		return "", "", false, false
	}
	if !exists {
		return "", "", false, true
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", "", false, false
	}
	return m.GetUID(), m.GetResourceVersion(), true, true
}

// working is the shared informer of key when it has one that has listed
// and whose watch reported no error since its last event; else nil. One
// that fails may be any age behind.
func (c *Cache) working(key cacheKey) *sharedInformer {
	c.mu.Lock()
	si := c.shared[key]
	c.mu.Unlock()
	if si == nil || !si.inf.HasSynced() {
		return nil
	}
	si.mu.Lock()
	failing := si.lastErr != nil
	si.mu.Unlock()
	if failing {
		return nil
	}
	return si
}
