package kube

import (
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fence is how recent a shared informer's objects must be before a wait
// may judge them: at least what a consistent list showed when the wait
// began, or the answer to the write the wait follows. Without it, a gate
// that starts a few milliseconds after a step's write could judge the
// object as it was before the write (its old generation, fully rolled
// out, looks Current).
//
// Resource versions are compared as numbers, as the API server's own
// watch cache does with those etcd gives; one that does not parse lifts
// the fence (the informer's objects are then judged as they come, as a
// wait without a shared cache would).
type fence struct {
	seen   map[string]uint64 // the version each object had, by name
	listRV uint64            // the list's own version; 0 for a write's answer
}

// fenceOfList fences on a consistent list of the wait's objects.
func fenceOfList(l *unstructured.UnstructuredList) *fence {
	objs := make([]metav1.Object, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return fenceAt(l.GetResourceVersion(), objs)
}

// fenceOfMeta fences on a consistent list of the wait's objects'
// metadata (asWritten's, when it could not judge from the answers).
func fenceOfMeta(l *metav1.PartialObjectMetadataList) *fence {
	objs := make([]metav1.Object, len(l.Items))
	for i := range l.Items {
		objs[i] = &l.Items[i]
	}
	return fenceAt(l.ResourceVersion, objs)
}

// fenceAt fences on a list's version and the versions of its objects;
// nil when one does not parse.
func fenceAt(listRV string, objs []metav1.Object) *fence {
	f := &fence{seen: make(map[string]uint64, len(objs))}
	var ok bool
	if f.listRV, ok = parseRV(listRV); !ok {
		return nil
	}
	for _, o := range objs {
		rv, ok := parseRV(o.GetResourceVersion())
		if !ok {
			return nil
		}
		f.seen[o.GetName()] = rv
	}
	return f
}

// fenceOfObject fences on an object as a write answered it.
func fenceOfObject(u *unstructured.Unstructured) *fence {
	rv, ok := parseRV(u.GetResourceVersion())
	if !ok {
		return nil
	}
	return &fence{seen: map[string]uint64{u.GetName(): rv}}
}

// fresh tells whether the informer's objects of the wait (objs) are at
// least as recent as the fence. missing are the listed objects the
// informer does not hold: each is either still on its way or deleted
// since, which only the API server can say (confirm). Once fresh, an
// informer stays so: its versions only grow.
func (f *fence) fresh(objs []*unstructured.Unstructured) (ok bool, missing []string) {
	cached := map[string]bool{}
	for _, o := range objs {
		rv, parsed := parseRV(o.GetResourceVersion())
		if !parsed {
			return true, nil
		}
		cached[o.GetName()] = true
		want, listed := f.seen[o.GetName()]
		switch {
		case listed && rv < want:
			return false, nil // an older version than the list or the write showed
		case !listed && f.listRV > 0 && rv <= f.listRV:
			return false, nil // gone before the list: its deletion is yet to arrive
		}
	}
	for name := range f.seen {
		if !cached[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	return len(missing) == 0, missing
}

// gone drops an object the API server says no longer exists from the
// fence: the informer will not hold it again.
func (f *fence) gone(name string) { delete(f.seen, name) }

func parseRV(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}
