package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// ErrNamespaceRequired: a namespaced object came without a namespace. The
// applier never guesses "default": a plan that forgot a namespace must not
// write into the wrong one.
var ErrNamespaceRequired = errors.New("namespace is required")

// applyBackoff spaces the retries of a transient error, for an API server
// blip or a kind that discovery serves a moment after its CRD got
// Established. Retry ends it where the next step would pass Cap: four
// tries, about 1.4s in all.
var applyBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 6, Cap: 3 * time.Second}

// Applier server-side applies unstructured objects with force, so Upshift
// takes over the fields it sets from whichever manager held them. It is
// safe for concurrent use.
type Applier struct {
	dyn     dynamic.Interface
	mapper  meta.RESTMapper
	manager string
	backoff wait.Backoff
	// cache, when set, is told the answer to each write of a
	// cluster-scoped object, for the waits that follow (answers.go).
	cache *Cache
	// answers, when set, records the answer to each write of a
	// namespaced object, for the waits given the same Answers
	// (writeanswers.go).
	answers *Answers
}

// NewApplier builds an Applier with field manager "upshift". A
// meta.ResettableRESTMapper is reset when a kind is unknown, so kinds of
// CRDs applied a moment ago resolve.
func NewApplier(dyn dynamic.Interface, mapper meta.RESTMapper) *Applier {
	return &Applier{dyn: dyn, mapper: mapper, manager: FieldManager, backoff: applyBackoff}
}

// WithFieldManager returns a copy that applies as another field manager.
// A step that owns only a few fields of an object (an image) needs its own
// manager: applying a partial object as "upshift" would drop every other
// field that "upshift" applied earlier.
func (a *Applier) WithFieldManager(name string) *Applier {
	c := *a
	c.manager = name
	return &c
}

// WithCache returns a copy that tells c the answers to its writes of
// cluster-scoped objects: a wait on c's Waiter then judges them from
// those answers while they are current (answers.go).
func (a *Applier) WithCache(c *Cache) *Applier {
	cp := *a
	cp.cache = c
	return &cp
}

// WithAnswers returns a copy that records the answers to its writes of
// namespaced objects in ans (nil: records none). The caller hands the
// same ans to the waits that may fence on those writes
// (Waiter.WithAnswers), and only while it writes them through Appliers
// given ans (writeanswers.go).
func (a *Applier) WithAnswers(ans *Answers) *Applier {
	cp := *a
	cp.answers = ans
	return &cp
}

// Apply server-side applies obj (field manager, force) and returns the
// object as the server stored it. Server-set metadata in obj (uid,
// resourceVersion, managedFields, …) is ignored, so a fetched object can be
// re-applied. Transient API errors are retried with backoff; permanent ones
// (forbidden, invalid, …) and a missing namespace are returned at once.
func (a *Applier) Apply(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return a.apply(ctx, obj, nil, "")
}

// ApplyAt is Apply on the condition that the object is still at
// resourceVersion: when it moved since, the API server refuses the write
// with a conflict (apierrors.IsConflict), which is returned at once, not
// retried. The condition does not hold back a create: applied to an
// object deleted since, obj is created as it is, or refused as invalid.
func (a *Applier) ApplyAt(ctx context.Context, obj *unstructured.Unstructured, resourceVersion string) (*unstructured.Unstructured, error) {
	if resourceVersion == "" {
		return nil, fmt.Errorf("apply %s on a condition: no resourceVersion", RefOf(obj))
	}
	return a.apply(ctx, obj, nil, resourceVersion)
}

// DryRunApply is Apply as a server-side dry run: the server validates,
// defaults and merges, and returns what Apply would store, changing nothing.
func (a *Applier) DryRunApply(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return a.apply(ctx, obj, []string{metav1.DryRunAll}, "")
}

func (a *Applier) apply(ctx context.Context, obj *unstructured.Unstructured, dryRun []string, resourceVersion string) (*unstructured.Unstructured, error) {
	ref := RefOf(obj)
	verb := "apply"
	if len(dryRun) > 0 {
		verb = "dry-run apply"
	}
	body := applyBody(obj)
	if resourceVersion != "" {
		// An apply configuration's resourceVersion is a precondition.
		body.SetResourceVersion(resourceVersion)
	}
	var out *unstructured.Unstructured
	err := a.retry(ctx, func() error {
		ri, err := a.resource(ref)
		if err != nil {
			return err
		}
		if ri.namespaced {
			body.SetNamespace(ref.Namespace)
		} else {
			body.SetNamespace("")
		}
		out, err = ri.Apply(ctx, ref.Name, body, metav1.ApplyOptions{FieldManager: a.manager, Force: true, DryRun: dryRun})
		if err == nil && len(dryRun) == 0 {
			if ri.namespaced {
				a.answers.record(ri.gvr, out)
			} else if a.cache != nil {
				a.cache.wrote(ri.gvr, out)
			}
		}
		if resourceVersion != "" && apierrors.IsConflict(err) {
			return permanent{err} // the condition failed: another try cannot pass it
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", verb, ref, err)
	}
	return out, nil
}

// Get reads the object ref names, retrying transient errors. A missing
// object is returned at once as a NotFound error (apierrors.IsNotFound).
func (a *Applier) Get(ctx context.Context, ref ObjectRef) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	err := a.retry(ctx, func() error {
		ri, err := a.resource(ref)
		if err != nil {
			return err
		}
		out, err = ri.Get(ctx, ref.Name, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", ref, err)
	}
	return out, nil
}

// RefOf names an object.
func RefOf(obj *unstructured.Unstructured) ObjectRef {
	return ObjectRef{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// resourceClient is a dynamic client for one object's resource.
type resourceClient struct {
	dynamic.ResourceInterface
	gvr        schema.GroupVersionResource
	namespaced bool
}

func (a *Applier) resource(ref ObjectRef) (resourceClient, error) {
	m, err := a.mapping(ref.GroupVersionKind())
	if err != nil {
		return resourceClient{}, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return resourceClient{ResourceInterface: a.dyn.Resource(m.Resource), gvr: m.Resource}, nil
	}
	if ref.Namespace == "" {
		return resourceClient{}, permanent{fmt.Errorf("%s is namespaced: %w", ref.Kind, ErrNamespaceRequired)}
	}
	return resourceClient{ResourceInterface: a.dyn.Resource(m.Resource).Namespace(ref.Namespace), gvr: m.Resource, namespaced: true}, nil
}

// mapping resolves a kind. An unknown kind resets the mapper (its CRD may
// have been Established since discovery was cached) and is tried once more.
func (a *Applier) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		if r, ok := a.mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
			m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("resolve kind %s: %w", gvk, err)
	}
	return m, nil
}

// permanent marks an error found before any request that no retry cures.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// retry runs call until it succeeds, fails permanently, the backoff is
// spent or ctx ends (see Retry); it returns the last error.
func (a *Applier) retry(ctx context.Context, call func() error) error {
	return Retry(ctx, a.backoff, retriable, func(int) error { return call() })
}

// retriable tells errors worth another try: see isPermanent. A missing
// object is an answer, not a blip; a missing namespace may be on its way.
func retriable(err error) bool {
	var p permanent
	switch {
	case errors.As(err, &p), isPermanent(err):
		return false
	case apierrors.IsNotFound(err):
		return IsNamespaceNotFound(err)
	}
	return true
}

// IsNamespaceNotFound tells an apply into a namespace that does not exist
// yet (another step or controller may be creating it) from a missing object.
func IsNamespaceNotFound(err error) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return false
	}
	d := se.Status().Details
	return d != nil && d.Kind == "namespaces"
}

// applyBody is obj without the metadata the server owns.
func applyBody(obj *unstructured.Unstructured) *unstructured.Unstructured {
	return WithoutServerMetadata(obj)
}

// Transient tells whether an API error may go away when the call is
// retried: everything but what isPermanent lists.
func Transient(err error) bool { return err != nil && !isPermanent(err) }
