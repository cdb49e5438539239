package kube

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resolveShared reads the objects from the run's Cache, fenced on the
// write the wait follows, or the answer to the caller's last write of its
// object (the Waiter's Answers, writeanswers.go), or else on a consistent
// list of the wait's objects (one request, where an informer of its own
// would cost a list and a watch).
func (s *session) resolveShared(gvr schema.GroupVersionResource, ns string, tweak func(*metav1.ListOptions)) (Health, bool, error) {
	if s.t.written != nil {
		s.fence = fenceOfObject(s.t.written)
	} else if ans := s.answer(gvr, ns); ans != nil {
		s.fence = fenceOfObject(ans)
	} else {
		var o metav1.ListOptions
		tweak(&o)
		l, err := s.w.dyn.Resource(gvr).Namespace(ns).List(s.ctx, o)
		switch {
		case err != nil && isPermanent(err):
			return Health{}, true, fmt.Errorf("list %s for %s: %w", gvr.Resource, s.t.desc, err)
		case err != nil:
			s.apiError(gvr.Resource, err)
			return s.unknown("list: " + err.Error()), false, nil
		}
		s.fence = fenceOfList(l)
	}
	inf, err := s.w.cache.join(s, gvr, ns, "", nil)
	if err != nil {
		return Health{}, true, err
	}
	s.objects, s.gvr, s.ns = inf, gvr, ns
	return s.unknown("waiting for the first list"), false, nil
}

// answer is the answer to the caller's last write of the one object the
// wait is about, when the caller gave the Waiter Answers that hold one
// (writeanswers.go); nil otherwise.
func (s *session) answer(gvr schema.GroupVersionResource, ns string) *unstructured.Unstructured {
	if s.t.name == "" || s.t.goneUID != "" {
		return nil
	}
	return s.w.answers.of(gvr, ns, s.t.name)
}

// freshEnough checks the shared informer's objects against the fence. A
// listed object the informer lacks is asked of the API server: gone, it
// leaves the fence; there, the informer has yet to receive it. (The
// informer's last resource version cannot tell: the reflector records it
// before the cache has applied the event.)
func (s *session) freshEnough(objs []*unstructured.Unstructured) (bool, error) {
	fresh, missing := s.fence.fresh(objs)
	if fresh || len(missing) == 0 {
		return fresh, nil
	}
	for _, name := range missing {
		_, err := s.w.dyn.Resource(s.gvr).Namespace(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			s.fence.gone(name)
		case err != nil && isPermanent(err):
			return false, fmt.Errorf("get %s %s/%s for %s: %w", s.gvr.Resource, s.ns, name, s.t.desc, err)
		case err != nil:
			s.apiError(s.gvr.Resource, err)
			return false, nil
		}
	}
	fresh, _ = s.fence.fresh(objs)
	return fresh, nil
}

// targetObjects are the informer's objects the wait is about, sorted: a
// shared informer holds the whole namespace.
func (s *session) targetObjects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range s.objects.objects() {
		if s.t.matches(u) {
			out = append(out, u)
		}
	}
	return out
}

// matches tells whether the wait is about u: u matches its selector, or
// has its name.
func (t target) matches(u *unstructured.Unstructured) bool {
	if t.selector != nil {
		return t.selector.Matches(labels.Set(u.GetLabels()))
	}
	return u.GetName() == t.name
}
