package kube

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// informer is a list-and-watch cache of one resource in one namespace. Its
// reflector re-lists and re-watches with backoff after any error, which is
// how transient API errors are retried.
type informer struct {
	cache.SharedIndexInformer
}

// start runs an informer for the session's lifetime. Every event wakes the
// wait loop, and so does the end of the first list. transform, if set,
// turns the dynamic client's objects into typed ones once, on arrival.
func (s *session) start(gvr schema.GroupVersionResource, ns string, tweak func(*metav1.ListOptions), transform cache.TransformFunc) (*informer, error) {
	var (
		lw      *cache.ListWatch
		example runtime.Object = &unstructured.Unstructured{}
	)
	switch {
	case gvr == CRDResource && s.w.CRDs != nil && transform == nil:
		// CRDs come as protobuf and are kept without their schemas.
		lw, example = crdListWatch(s.w.CRDs, tweak, true), &apiextensionsv1.CustomResourceDefinition{}
		transform = slimCRDs(s.decodeError)
	default:
		lw = listWatch(s.w.dyn.Resource(gvr).Namespace(ns), tweak, true)
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, example,
		cache.SharedIndexInformerOptions{ObjectDescription: gvr.String()})
	if transform != nil {
		if err := inf.SetTransform(transform); err != nil {
			return nil, fmt.Errorf("watch %s: %w", gvr.Resource, err)
		}
	}
	if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		s.apiError(gvr.Resource, err)
	}); err != nil {
		return nil, fmt.Errorf("watch %s: %w", gvr.Resource, err)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.poke() },
		UpdateFunc: func(any, any) { s.poke() },
		DeleteFunc: func(any) { s.poke() },
	}); err != nil {
		return nil, fmt.Errorf("watch %s: %w", gvr.Resource, err)
	}
	go inf.RunWithContext(s.ctx)
	go func() {
		if WaitSynced(s.ctx, inf.HasSynced) {
			s.poke()
		}
	}()
	return &informer{inf}, nil
}

// listWatch lists and watches ri with tweak's options. The reflector
// lists at resourceVersion "0": whatever the API server's cache holds,
// which can predate a write this process just made, and a stale object
// can look Current (its old generation fully rolled out). consistent asks
// for a consistent read instead, for a wait that has no fence (fence.go).
// A consistent read can cost the API server ~100 ms to make sure its
// cache is fresh, so the shared informers, which waits fence, skip it.
func listWatch(ri dynamic.ResourceInterface, tweak func(*metav1.ListOptions), consistent bool) *cache.ListWatch {
	list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) }
	return listWatchWith(list, ri.Watch, tweak, consistent)
}

// listWatchWith is listWatch over any client's List and Watch.
func listWatchWith(list func(context.Context, metav1.ListOptions) (runtime.Object, error), watchWith func(context.Context, metav1.ListOptions) (watch.Interface, error), tweak func(*metav1.ListOptions), consistent bool) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			if consistent && o.ResourceVersion == "0" {
				o.ResourceVersion = ""
			}
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			return watchWith(ctx, o)
		},
	}
}

// objects lists the cached objects of an untransformed informer, sorted.
func (i *informer) objects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range i.GetStore().List() {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	sortObjects(out)
	return out
}

// items lists the cached objects of an informer transformed by typed[T].
func items[T any](i *informer) []T {
	var out []T
	for _, o := range i.GetStore().List() {
		if t, ok := o.(*T); ok {
			out = append(out, *t)
		}
	}
	return out
}

// typed returns a cache.TransformFunc that stores *T instead of
// unstructured objects, converted once per event rather than on every
// evaluation, without managedFields (large, never read). An object that
// does not convert is reported to onErr, kept as is and skipped by items.
func typed[T any](onErr func(error)) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		out := new(T)
		if err := runtimeFromUnstructured(u.Object, out); err != nil {
			onErr(fmt.Errorf("decode %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err))
			return obj, nil
		}
		if a, err := meta.Accessor(out); err == nil {
			a.SetManagedFields(nil)
		}
		return out, nil
	}
}

func runtimeFromUnstructured(obj map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into)
}
