package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// DefaultPoll is how often a wait re-evaluates when no event arrived.
const DefaultPoll = 2 * time.Second

// Waiter waits for objects to become Current. It is safe for concurrent use;
// each wait runs its own informers and stops them when it returns.
type Waiter struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	// cache, when set, holds the informers of namespaced objects that
	// the waits share (WithCache).
	cache *Cache
	// answers, when set, is the caller's write answers a wait on the
	// cache may fence on instead of a list (WithAnswers).
	answers *Answers
	// Poll is the fallback re-evaluation interval; events usually come
	// first. The informers re-list by themselves after watch errors, so
	// the caches heal; the poll covers a missed wake-up and messages that
	// mention a recent API error.
	Poll time.Duration
	// CRDs, when set, is how waits on CustomResourceDefinitions read
	// them (NewCRDClient): as protobuf, kept without their schemas.
	CRDs apiextensionsclient.CustomResourceDefinitionInterface
	// Metadata, when set, lists objects' metadata alone: a wait on
	// cluster-scoped objects the run wrote judges them from the writes'
	// answers while the list shows them unchanged (answers.go).
	Metadata metadata.Interface
	// Logs, when set, reads the log of a container whose crash failed a
	// wait, so the failure says why in the program's own words.
	Logs LogTail
}

// NewWaiter builds a Waiter from a dynamic client and a RESTMapper. A
// meta.ResettableRESTMapper is reset when a kind is unknown, so kinds from
// CRDs installed during the wait are found.
func NewWaiter(dyn dynamic.Interface, mapper meta.RESTMapper) *Waiter {
	return &Waiter{dyn: dyn, mapper: mapper, Poll: DefaultPoll}
}

// NewWaiterForConfig builds a Waiter with a discovery-backed RESTMapper.
func NewWaiterForConfig(cfg *rest.Config) (*Waiter, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	w := NewWaiter(dyn, mapper)
	if w.CRDs, err = NewCRDClient(cfg); err != nil {
		return nil, err
	}
	return w, nil
}

// WithCache returns a Waiter like w whose waits on namespaced objects read
// c's shared informers instead of starting their own.
func (w *Waiter) WithCache(c *Cache) *Waiter {
	cp := *w
	cp.cache = c
	return &cp
}

// WithAnswers returns a Waiter like w whose waits on one namespaced
// object of the Cache (WithCache) fence on its answer in ans, when ans
// holds one, instead of a consistent list: the caller vouches that its
// last write of the object is that answer (writeanswers.go). nil: the
// waits list.
func (w *Waiter) WithAnswers(ans *Answers) *Waiter {
	cp := *w
	cp.answers = ans
	return &cp
}

// WaitWritten is WaitCurrent for an object as the API server answered
// this process's write of it: the wait judges no older version of it.
// An answer that is Current already ends the wait at once, when the
// verdict on the object reads nothing but the object (see
// currentAsWritten).
func (w *Waiter) WaitWritten(ctx context.Context, written *unstructured.Unstructured, timeout time.Duration) (Health, error) {
	if h, ok := currentAsWritten(written); ok {
		return h, nil
	}
	ref := RefOf(written)
	return w.wait(ctx, target{desc: ref.String(), gvk: ref.GroupVersionKind(), namespace: ref.Namespace, name: ref.Name, written: written}, timeout)
}

// currentAsWritten judges a write's answer as the wait would first judge
// the object: the answer is the object at the version the wait's fence
// asks for. When that is Current, an informer's list and watch would
// find the same (or a later version, which nothing orders before it).
// Not for a workload or a Job, whose verdict also reads their pods.
func currentAsWritten(written *unstructured.Unstructured) (Health, bool) {
	if readsPods(groupKind(written)) {
		return Health{}, false
	}
	h := Evaluate(written, Related{})
	return h, h.Current()
}

// WaitCurrent waits until the object is Current and returns its Health.
// It returns a *NotReadyError matching ErrFailing as soon as the object
// fails, or matching ErrTimeout after timeout (zero: no timeout of its own),
// carrying the last message. A missing object, or a kind not served yet, is
// waited for. Transient API errors are retried; permanent ones (forbidden,
// unauthorized, bad request) end the wait with that error.
func (w *Waiter) WaitCurrent(ctx context.Context, ref ObjectRef, timeout time.Duration) (Health, error) {
	return w.wait(ctx, target{desc: ref.String(), gvk: ref.GroupVersionKind(), namespace: ref.Namespace, name: ref.Name}, timeout)
}

// WaitSelectorCurrent waits until every object of the kind that matches the
// selector is Current. Unlike WaitCurrent it fails at once, with ErrNoMatch,
// when the first complete list matches nothing: an empty selector result is
// a mistake in the plan far more often than an object yet to come.
func (w *Waiter) WaitSelectorCurrent(ctx context.Context, ref SelectorRef, timeout time.Duration) (Health, error) {
	sel, err := labels.Parse(ref.Selector)
	if err != nil {
		return Health{}, fmt.Errorf("wait for %s: parse selector: %w", ref, err)
	}
	return w.wait(ctx, target{desc: ref.String(), gvk: ref.GroupVersionKind(), namespace: ref.Namespace, selector: sel}, timeout)
}

// WaitCRDEstablished waits until the CustomResourceDefinition is
// Established. kstatus knows CRDs: Established=True is Current,
// NamesAccepted=False or Established=False (other than while Installing) is
// Failed. On success the RESTMapper is reset so the new kind resolves.
func (w *Waiter) WaitCRDEstablished(ctx context.Context, name string, timeout time.Duration) (Health, error) {
	ref := ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: name}
	h, err := w.WaitCurrent(ctx, ref, timeout)
	if err == nil {
		if r, ok := w.mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
	}
	return h, err
}

// WaitGone waits until old, an object as this process listed or deleted
// it, is no longer there: deleted, or replaced by another of its name
// (another UID). It reads the run's shared informer where there is one,
// so a wait on the object's re-creation after it needs no list of its own.
func (w *Waiter) WaitGone(ctx context.Context, old *unstructured.Unstructured, timeout time.Duration) error {
	ref := RefOf(old)
	_, err := w.wait(ctx, target{desc: ref.String(), gvk: ref.GroupVersionKind(), namespace: ref.Namespace, name: ref.Name, written: old, goneUID: old.GetUID()}, timeout)
	return err
}

// target is what one wait watches: one named object, or a selector's objects.
type target struct {
	desc      string
	gvk       schema.GroupVersionKind
	namespace string
	name      string          // set for one object
	selector  labels.Selector // set for a selector
	// written is the object as this process's write left it, if the
	// wait follows one.
	written *unstructured.Unstructured
	// goneUID, when set, makes the wait one for the end of the object of
	// this UID (WaitGone) instead of for it to be Current.
	goneUID types.UID
}

// errDeadline marks the wait's own timeout, as opposed to the caller's
// context ending.
var errDeadline = errors.New("wait deadline")

func (w *Waiter) wait(ctx context.Context, t target, timeout time.Duration) (Health, error) {
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errDeadline)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel() // stops the session's informers

	poll := w.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	s := newSession(ctx, w, t)
	defer s.leave()
	retry := 250 * time.Millisecond
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		last, done, err := s.check()
		if done {
			return last, err
		}
		delay := poll
		if !s.resolved() {
			// Resolving the kind has no watch to wake us: back off.
			delay, retry = retry, min(2*retry, poll)
		}
		timer.Reset(delay)
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errDeadline) {
				return last, &NotReadyError{Reason: ErrTimeout, Health: last, Timeout: timeout}
			}
			return last, fmt.Errorf("wait for %s: %w", t.desc, context.Cause(ctx))
		case <-s.wake:
		case <-timer.C:
		}
	}
}
