package kube

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A wait on a namespaced object that follows no write of its own (a
// gate) fences on a consistent list of the object, so that it never
// judges a version older than this process's last write of it (fence.go).
// When that last write went through an Applier, its answer is such a
// fence already: the list would only find it again, or a later version
// by someone else, which the informer brings as it would a moment after
// the list. Only the caller knows whether all its writes of an object
// went through the Applier, so the caller vouches for them: it hands one
// Answers to the Applier that writes (Applier.WithAnswers) and to the
// Waiter that waits (Waiter.WithAnswers), and stops handing it out once
// it writes otherwise (Helm, a Job, a re-creation, a restore). A Waiter
// without Answers lists, as it must when nobody vouches.

// Answers is the answers to the caller's writes of namespaced objects,
// made through an Applier given it, for the waits given it to fence on
// instead of a consistent list. It is safe for concurrent use; a nil
// *Answers holds none, and its waits list.
type Answers struct {
	mu       sync.Mutex
	byObject map[answerKey]*unstructured.Unstructured
}

// answerKey names one namespaced object written.
type answerKey struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

// NewAnswers makes an empty Answers, for the writes from now on.
func NewAnswers() *Answers {
	return &Answers{byObject: map[answerKey]*unstructured.Unstructured{}}
}

// record remembers the answer to a write of a namespaced object. Writes
// made side by side may be answered in another order than the server
// stored them: the newer version of the same object stays.
func (a *Answers) record(gvr schema.GroupVersionResource, answer *unstructured.Unstructured) {
	if a == nil {
		return
	}
	kept := answer.DeepCopy()
	kept.SetManagedFields(nil) // large, and no verdict reads them
	a.mu.Lock()
	defer a.mu.Unlock()
	key := answerKey{gvr: gvr, namespace: answer.GetNamespace(), name: answer.GetName()}
	if prev := a.byObject[key]; prev != nil && prev.GetUID() == kept.GetUID() {
		was, ok1 := parseRV(prev.GetResourceVersion())
		now, ok2 := parseRV(kept.GetResourceVersion())
		switch {
		case !ok1 || !ok2:
			delete(a.byObject, key) // cannot tell which is newer: waits list
			return
		case now < was:
			return
		}
	}
	a.byObject[key] = kept
}

// of is the answer to the last write of the object, or nil when there is
// none to trust.
func (a *Answers) of(gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byObject[answerKey{gvr: gvr, namespace: namespace, name: name}]
}
