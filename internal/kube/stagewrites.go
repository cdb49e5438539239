package kube

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A wait on a namespaced object that follows no write of its own (a
// gate) fences on a consistent list of the object, so that it never
// judges a version older than this process's last write of it (fence.go).
// When this process's last write of the object was made in the current
// stage, through the Applier, by steps that write nothing else (image,
// manifests, crds), that write's answer is such a fence already: the
// list would only find it again, or a later version by someone else,
// which the informer brings as it would a moment after the list. The
// runner says when a stage begins and when a step that writes otherwise
// (Helm, a Job, a re-creation, a restore) starts; from then until the
// next stage, no answer serves and gates list as before.

// stageKey names one namespaced object written in the stage.
type stageKey struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

// StageBegins forgets the answers of the stage before: a gate of the new
// stage fences on its own steps' writes only.
func (c *Cache) StageBegins() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stageWritten = map[stageKey]*unstructured.Unstructured{}
	c.otherWriter = false
}

// OtherWriter says a step that writes otherwise than through the
// Applier started: until the next stage, gates fence on a list again.
func (c *Cache) OtherWriter() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.otherWriter = true
	c.stageWritten = nil
}

// wroteInStage remembers the answer to a write of a namespaced object,
// unless a step of the stage writes otherwise. Steps of a graph stage
// write side by side, and their answers may come in another order than
// the server stored them: the newer version of the same object stays.
func (c *Cache) wroteInStage(gvr schema.GroupVersionResource, answer *unstructured.Unstructured) {
	kept := answer.DeepCopy()
	kept.SetManagedFields(nil) // large, and no verdict reads them
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.otherWriter || c.stageWritten == nil {
		return
	}
	key := stageKey{gvr: gvr, namespace: answer.GetNamespace(), name: answer.GetName()}
	if prev := c.stageWritten[key]; prev != nil && prev.GetUID() == kept.GetUID() {
		was, ok1 := parseRV(prev.GetResourceVersion())
		now, ok2 := parseRV(kept.GetResourceVersion())
		switch {
		case !ok1 || !ok2:
			delete(c.stageWritten, key) // cannot tell which is newer: gates list
			return
		case now < was:
			return
		}
	}
	c.stageWritten[key] = kept
}

// stageAnswer is the answer to the stage's last write of the object, or
// nil when there is none to trust.
func (c *Cache) stageAnswer(gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.otherWriter {
		return nil
	}
	return c.stageWritten[stageKey{gvr: gvr, namespace: namespace, name: name}]
}
