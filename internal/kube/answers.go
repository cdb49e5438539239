package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A wait on cluster-scoped objects (a platform's CRDs, say) has no shared
// informer to read (see Cache), and its own informer's first list reads
// every object whole: on Liqo's 28 CRDs, right after a step rewrote them,
// that list took 40-70 ms of the API server and ~20 ms more to decode, on
// the run's critical path. But the step's writes were answered with the
// objects as stored, and an object whose resource version has not moved
// since is that answer byte for byte. So a run's Cache remembers the
// answers to its writes of cluster-scoped objects, and such a wait first
// lists only the objects' metadata (a few KB): when every object listed
// is one the run wrote, at the version its write left, and each is
// Current, the answers are the verdict. Anything else (an object the run
// did not write, or changed since) goes the usual way, an informer's list
// and watch, as if nothing had been remembered.

// writtenKey names one cluster-scoped object a run wrote.
type writtenKey struct {
	gvr  schema.GroupVersionResource
	name string
}

// wrote remembers the API server's answer to this run's write of a
// cluster-scoped object, without what no verdict reads (a CRD's
// schemas, managed fields): a platform's CRDs weigh megabytes.
func (c *Cache) wrote(gvr schema.GroupVersionResource, answer *unstructured.Unstructured) {
	slim := slimAnswer(answer)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written == nil {
		c.written = map[writtenKey]*unstructured.Unstructured{}
	}
	c.written[writtenKey{gvr: gvr, name: answer.GetName()}] = slim
}

// writtenAt is the answer to this run's last write of the object, if
// the object is still at the version that write left: uid and
// resourceVersion as a list shows it now.
func (c *Cache) writtenAt(gvr schema.GroupVersionResource, m metav1.PartialObjectMetadata) *unstructured.Unstructured {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.written[writtenKey{gvr: gvr, name: m.Name}]
	if u == nil || u.GetUID() != m.UID || u.GetResourceVersion() != m.ResourceVersion {
		return nil
	}
	return u
}

// writtenOf is every answer remembered for the resource.
func (c *Cache) writtenOf(gvr schema.GroupVersionResource) []*unstructured.Unstructured {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*unstructured.Unstructured
	for k, u := range c.written {
		if k.gvr == gvr {
			out = append(out, u)
		}
	}
	return out
}

// asWritten judges a wait on cluster-scoped objects from the run's write
// answers, as the note above says. ok is false when it cannot (not all of
// them are known as they are now, a listing failed, nothing matches, or
// not all are Current): the wait then goes the usual way. listed is the
// consistent list of the objects' metadata, when it made one: the
// informer's first list, from the API server's cache, must show them at
// least as recent before it judges (another client's change a moment
// ago, say).
func (s *session) asWritten(gvr schema.GroupVersionResource, tweak func(*metav1.ListOptions)) (h Health, ok bool, listed *metav1.PartialObjectMetadataList) {
	if s.w.cache == nil || s.w.Metadata == nil || s.t.goneUID != "" {
		return Health{}, false, nil
	}
	known := s.w.cache.writtenOf(gvr)
	if len(known) == 0 {
		return Health{}, false, nil
	}
	for _, u := range known {
		if s.t.matches(u) && !Evaluate(u, Related{}).Current() {
			// A CRD just created, say: the informer must wait for it
			// anyway, so the listing would be a request for nothing.
			return Health{}, false, nil
		}
	}
	var o metav1.ListOptions
	tweak(&o)
	l, err := s.w.Metadata.Resource(gvr).List(s.ctx, o) // consistent: no resourceVersion
	if err != nil {
		return Health{}, false, nil
	}
	if len(l.Items) == 0 {
		return Health{}, false, l
	}
	objs := make([]*unstructured.Unstructured, 0, len(l.Items))
	for _, m := range l.Items {
		u := s.w.cache.writtenAt(gvr, m)
		if u == nil || readsPods(groupKind(u)) {
			return Health{}, false, l
		}
		objs = append(objs, u)
	}
	sortObjects(objs)
	healths := make([]Health, 0, len(objs))
	for _, u := range objs {
		h := Evaluate(u, Related{})
		if !h.Current() {
			return Health{}, false, l // the informer waits for it, and says why
		}
		healths = append(healths, h)
	}
	return s.aggregate(healths), true, l
}

// slimAnswer copies a write's answer without its managed fields and, for
// a CRD, without its versions' schemas (SlimCRD's cut): the copy stays
// the run's while the answer is its writer's to keep or change.
func slimAnswer(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if k == "spec" && groupKind(u) == crdKind {
			out[k] = specWithoutSchemas(v)
			continue
		}
		out[k] = runtime.DeepCopyJSONValue(v)
	}
	slim := &unstructured.Unstructured{Object: out}
	slim.SetManagedFields(nil)
	if a := slim.GetAnnotations(); a != nil {
		delete(a, lastApplied)
		slim.SetAnnotations(a)
	}
	return slim
}

// lastApplied is the annotation kubectl's client-side apply keeps a copy
// of the whole object in.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// specWithoutSchemas copies a CRD's spec but its versions' schemas.
func specWithoutSchemas(v any) any {
	spec, ok := v.(map[string]any)
	if !ok {
		return runtime.DeepCopyJSONValue(v)
	}
	out := make(map[string]any, len(spec))
	for k, v := range spec {
		versions, isList := v.([]any)
		if k != "versions" || !isList {
			out[k] = runtime.DeepCopyJSONValue(v)
			continue
		}
		cut := make([]any, 0, len(versions))
		for _, ver := range versions {
			m, ok := ver.(map[string]any)
			if !ok {
				cut = append(cut, runtime.DeepCopyJSONValue(ver))
				continue
			}
			cp := make(map[string]any, len(m))
			for vk, vv := range m {
				if vk != "schema" {
					cp[vk] = runtime.DeepCopyJSONValue(vv)
				}
			}
			cut = append(cut, cp)
		}
		out[k] = cut
	}
	return out
}
