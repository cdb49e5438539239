package recreate

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// found is what the step matched, per namespace.
type found struct {
	namespaces []string
	old        map[string][]*unstructured.Unstructured // created before the step started
	fresh      map[string][]*unstructured.Unstructured // re-created already
	// expected is how many objects the owners in a namespace keep: what
	// must be back (from objects are waited for by name instead).
	expected map[string]int
}

func (f *found) total() int {
	n := 0
	for _, ns := range f.namespaces {
		n += len(f.old[ns]) + len(f.fresh[ns])
	}
	return n
}

// oldUIDs are the objects the step deletes: whatever has another UID is
// a replacement.
func (f *found) oldUIDs() map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, ns := range f.namespaces {
		for _, o := range f.old[ns] {
			out[o.GetUID()] = true
		}
	}
	return out
}

func (f *found) oldCount() int {
	n := 0
	for _, ns := range f.namespaces {
		n += len(f.old[ns])
	}
	return n
}

// orphans are the old objects nobody would bring back: no controlling
// owner, and not in `from`.
func (f *found) orphans(fromKeys map[string]bool) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, ns := range f.namespaces {
		for _, o := range f.old[ns] {
			if controller(o) == nil && !fromKeys[key(o.GetNamespace(), o.GetName())] {
				out = append(out, o)
			}
		}
	}
	return out
}

func key(ns, name string) string { return ns + "/" + name }

// fromKeys are the `from` objects of the step's kind, by namespace/name.
func (e *Executor) fromKeys() map[string]bool {
	out := map[string]bool{}
	for _, o := range e.from {
		if o.GroupVersionKind().GroupKind() == e.gvk.GroupKind() {
			out[key(o.GetNamespace(), o.GetName())] = true
		}
	}
	return out
}

func (e *Executor) find(ctx context.Context, since time.Time) (*found, error) {
	nss, err := e.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	f := &found{old: map[string][]*unstructured.Unstructured{}, fresh: map[string][]*unstructured.Unstructured{}, expected: map[string]int{}}
	for _, ns := range nss {
		objs, err := e.matched(ctx, ns)
		if err != nil {
			return nil, err
		}
		if len(objs) == 0 {
			continue
		}
		f.namespaces = append(f.namespaces, ns)
		for _, o := range objs {
			if fresh(o, since) {
				f.fresh[ns] = append(f.fresh[ns], o)
			} else {
				f.old[ns] = append(f.old[ns], o)
			}
		}
		if f.expected[ns], err = e.expected(ctx, ns, objs); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// expected sums, over the controlling owners of objs, how many objects
// each keeps: its spec.replicas (ReplicaSet, StatefulSet, an operator's
// scale subresource shape) or status.desiredNumberScheduled (DaemonSet);
// for an owner that says neither, as many as it has now. An owner that is
// gone keeps none.
func (e *Executor) expected(ctx context.Context, ns string, objs []*unstructured.Unstructured) (int, error) {
	type owner struct {
		ref   metav1.OwnerReference
		count int
	}
	owners := map[string]*owner{}
	for _, o := range objs {
		c := controller(o)
		if c == nil {
			continue
		}
		if owners[string(c.UID)] == nil {
			owners[string(c.UID)] = &owner{ref: *c}
		}
		owners[string(c.UID)].count++
	}
	total := 0
	for _, ow := range owners {
		n, err := e.ownerKeeps(ctx, ns, ow.ref)
		if err != nil {
			return 0, err
		}
		if n < 0 {
			n = ow.count
		}
		total += n
	}
	return total, nil
}

// ownerKeeps reads an owner's desired count; -1 when it states none.
func (e *Executor) ownerKeeps(ctx context.Context, ns string, ref metav1.OwnerReference) (int, error) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	m, err := e.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return -1, nil // an owner of a kind not served any more re-creates nothing we can count
	}
	u, err := e.Dynamic.Resource(m.Resource).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return 0, nil
	case apierrors.IsForbidden(err):
		// Least privilege: without read access to the owner, count what
		// it has now.
		return -1, nil
	case err != nil:
		return 0, fmt.Errorf("read owner %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	case u.GetUID() != ref.UID:
		return 0, nil // the owner itself was re-created: the new one has its own objects
	}
	if n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
		return int(n), nil
	}
	if n, ok, _ := unstructured.NestedInt64(u.Object, "status", "desiredNumberScheduled"); ok {
		return int(n), nil
	}
	return -1, nil
}

// resource is the step's kind in one namespace.
func (e *Executor) resource(ns string) (dynamic.ResourceInterface, error) {
	m, err := e.Mapper.RESTMapping(e.gvk.GroupKind(), e.gvk.Version)
	if err != nil {
		if rm, ok := e.Mapper.(meta.ResettableRESTMapper); ok && meta.IsNoMatchError(err) {
			rm.Reset()
			m, err = e.Mapper.RESTMapping(e.gvk.GroupKind(), e.gvk.Version)
		}
		if err != nil {
			return nil, fmt.Errorf("map %s: %w", e.gvk, err)
		}
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return nil, fmt.Errorf("%s is cluster-scoped: recreate works on namespaced kinds", e.gvk.Kind)
	}
	return e.Dynamic.Resource(m.Resource).Namespace(ns), nil
}
