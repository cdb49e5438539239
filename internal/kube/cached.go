package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// CachedPods returns the namespace's pods that sel matches, as the run's
// shared informer holds them: ok is false when there is none for the
// namespace, its first list is not in, or its watch is failing. A wait on a workload of the
// namespace starts it (its verdict reads the pods), so a step that waited
// for its rollout can judge the rollout's pods without a list of its own.
// The informer may lag the API server by an event's way: what it shows
// is the pods as they were a moment ago.
func (w *Waiter) CachedPods(ns string, sel labels.Selector) (pods []corev1.Pod, ok bool) {
	if w.cache == nil {
		return nil, false
	}
	si := w.cache.working(cacheKey{gvr: podsResource, ns: ns, kind: "Pod"})
	if si == nil {
		return nil, false
	}
	all := items[corev1.Pod](&informer{si.inf})
	return matching(all, sel, func(p corev1.Pod) map[string]string { return p.Labels }), true
}

// CachedMeta returns the UID and resourceVersion of the named object as
// the run's shared informer of its resource and namespace holds it:
// known is false when there is no such informer, its first list is not
// in or its watch is failing; found false when the informer does not
// hold the object. Like
// CachedPods, it is the object as it was a moment ago.
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
