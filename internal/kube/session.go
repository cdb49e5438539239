package kube

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

var (
	podsResource        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	replicaSetsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
)

// apiErrorShown is how long a transient API error stays in messages.
const apiErrorShown = 30 * time.Second

// session is one wait: the informers it runs and what they reported.
type session struct {
	ctx  context.Context
	w    *Waiter
	t    target
	wake chan struct{}

	objects *informer            // nil until the kind resolves
	related map[string]*relWatch // by namespace and selector
	joined  []*sharedInformer    // the Cache's informers it listens to

	// fence, when the objects come from the shared Cache, is how recent
	// they must be before they are judged; met once they were.
	fence    *fence
	fenceMet bool
	gvr      schema.GroupVersionResource // of the shared objects informer
	ns       string

	mu       sync.Mutex
	fatal    error // a permanent API error: ends the wait
	apiErr   error // the last transient one, shown for a while
	apiErrAt time.Time
}

// relWatch follows what a workload's verdict depends on besides itself.
type relWatch struct {
	pods        *informer
	replicaSets *informer // Deployments only
}

func newSession(ctx context.Context, w *Waiter, t target) *session {
	return &session{ctx: ctx, w: w, t: t, wake: make(chan struct{}, 1), related: map[string]*relWatch{}}
}

// poke wakes the wait loop; one pending wake-up is enough.
func (s *session) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// apiError records an error reported by an informer's reflector, which
// retries by itself with backoff.
func (s *session) apiError(what string, err error) {
	if isRoutine(err) {
		return
	}
	s.mu.Lock()
	if isPermanent(err) && s.fatal == nil {
		s.fatal = fmt.Errorf("watch %s for %s: %w", what, s.t.desc, err)
	}
	s.apiErr, s.apiErrAt = err, time.Now()
	s.mu.Unlock()
	s.poke()
}

// decodeError records an object the cache could not convert: not fatal,
// but shown, since that object is left out of the verdict.
func (s *session) decodeError(err error) { s.apiError("decode", err) }

// apiErrSuffix mentions a recent transient API error, so that a timeout
// caused by an unreachable API server says so.
func (s *session) apiErrSuffix() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apiErr == nil || time.Since(s.apiErrAt) > apiErrorShown {
		return ""
	}
	return fmt.Sprintf(" (last API error: %v)", s.apiErr)
}

func (s *session) resolved() bool { return s.objects != nil }

// check evaluates what the informers hold. done means the wait is over,
// with err nil when the target is Current.
func (s *session) check() (h Health, done bool, err error) {
	s.mu.Lock()
	fatal := s.fatal
	s.mu.Unlock()
	if fatal != nil {
		return Health{Status: status.UnknownStatus, Message: fatal.Error()}, true, fatal
	}
	if s.objects == nil {
		if h, done, err := s.resolve(); done || s.objects == nil {
			return h, done, err
		}
	}
	if !s.objects.HasSynced() {
		return s.unknown("waiting for the first list"), false, nil
	}
	objs := s.targetObjects()
	if s.fence != nil && !s.fenceMet {
		fresh, err := s.freshEnough(objs)
		if err != nil {
			return Health{}, true, err
		}
		if !fresh {
			return s.unknown("waiting for the watch to catch up"), false, nil
		}
		s.fenceMet = true
	}
	if s.t.goneUID != "" {
		return s.gone(objs)
	}
	if len(objs) == 0 {
		if s.t.selector == nil {
			return Health{Status: status.NotFoundStatus, Message: s.t.desc + ": not found" + s.apiErrSuffix()}, false, nil
		}
		h := Health{Status: status.NotFoundStatus, Message: s.t.desc + ": nothing matches"}
		return h, true, &NotReadyError{Reason: ErrNoMatch, Health: h}
	}
	healths := make([]Health, 0, len(objs))
	for _, o := range objs {
		rel, synced, err := s.relatedFor(o)
		if err != nil {
			return Health{}, true, err
		}
		h := Evaluate(o, rel)
		h.Pods, h.Object = rel.Pods, o
		if h.Failing() && !synced {
			// Wait for the full pod list: its message names the culprit.
			h.Status = status.InProgressStatus
		}
		healths = append(healths, h)
	}
	h = s.aggregate(healths)
	switch {
	case h.Current():
		return h, true, nil
	case h.Failing():
		h = WithLogs(s.ctx, s.w.Logs, h)
		return h, true, &NotReadyError{Reason: ErrFailing, Health: h}
	}
	h.Message += s.apiErrSuffix()
	return h, false, nil
}

// gone judges a wait for an object's end (WaitGone): done once none of
// the wait's objects has its UID.
func (s *session) gone(objs []*unstructured.Unstructured) (Health, bool, error) {
	for _, o := range objs {
		if o.GetUID() == s.t.goneUID {
			return Health{Status: status.TerminatingStatus, Message: s.t.desc + ": being deleted" + s.apiErrSuffix()}, false, nil
		}
	}
	return Health{Status: status.NotFoundStatus, Message: s.t.desc + ": gone"}, true, nil
}

func (s *session) unknown(msg string) Health {
	return Health{Status: status.UnknownStatus, Message: s.t.desc + ": " + msg + s.apiErrSuffix()}
}

// aggregate folds the verdicts on a selector's objects (or the one object):
// the first failure wins, then the first object not yet Current.
func (s *session) aggregate(hs []Health) Health {
	if len(hs) == 1 && s.t.selector == nil {
		return hs[0]
	}
	current := 0
	var pending *Health
	for i := range hs {
		switch {
		case hs[i].Failing():
			return hs[i]
		case hs[i].Current():
			current++
		case pending == nil:
			pending = &hs[i]
		}
	}
	if pending == nil {
		return Health{Status: status.CurrentStatus, Message: fmt.Sprintf("%s: all %d Current", s.t.desc, len(hs))}
	}
	return Health{Status: pending.Status, Message: fmt.Sprintf("%s (%d of %d Current)", pending.Message, current, len(hs))}
}

// resolve maps the kind to a resource and starts watching it. An unknown
// kind is waited for (its CRD may be on the way) after resetting the mapper.
func (s *session) resolve() (Health, bool, error) {
	m, err := s.w.mapper.RESTMapping(s.t.gvk.GroupKind(), s.t.gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		if r, ok := s.w.mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
		return s.unknown(fmt.Sprintf("kind %s is not served yet", s.t.gvk)), false, nil
	case err != nil && isPermanent(err):
		return Health{}, true, fmt.Errorf("resolve %s for %s: %w", s.t.gvk, s.t.desc, err)
	case err != nil:
		return s.unknown(fmt.Sprintf("resolve kind: %v", err)), false, nil
	}
	ns := s.t.namespace
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		ns = ""
	} else if ns == "" && s.t.selector == nil {
		return Health{}, true, fmt.Errorf("wait for %s: %s is namespaced: namespace is required", s.t.desc, s.t.gvk.Kind)
	}
	tweak := func(o *metav1.ListOptions) {
		if s.t.selector != nil {
			o.LabelSelector = s.t.selector.String()
		} else {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", s.t.name).String()
		}
	}
	if s.w.cache != nil && ns != "" {
		return s.resolveShared(m.Resource, ns, tweak)
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		h, ok, listed := s.asWritten(m.Resource, tweak)
		if ok {
			return h, true, nil
		}
		if listed != nil {
			s.fence, s.gvr, s.ns = fenceOfMeta(listed), m.Resource, ""
		}
	}
	inf, err := s.start(m.Resource, ns, tweak, nil)
	if err != nil {
		return Health{}, true, err
	}
	s.objects = inf
	return s.unknown("waiting for the first list"), false, nil
}

// relatedFor returns the pods (and ReplicaSets) a workload's verdict needs,
// starting their informers on first use. synced is false until their first
// list is in.
func (s *session) relatedFor(u *unstructured.Unstructured) (rel Related, synced bool, err error) {
	gk := groupKind(u)
	if !readsPods(gk) {
		return Related{}, true, nil
	}
	raw, found, err := unstructured.NestedMap(u.Object, "spec", "selector")
	if err != nil || !found {
		return Related{}, true, nil // no selector, no pods to look at
	}
	var ls metav1.LabelSelector
	if err := runtimeFromUnstructured(raw, &ls); err != nil {
		return Related{}, true, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return Related{}, true, nil // an invalid or empty selector would list every pod
	}
	withRS := gk == "apps/Deployment"
	key := fmt.Sprintf("%s\x00%s\x00%t", u.GetNamespace(), sel, withRS)
	rw := s.related[key]
	if rw == nil {
		tweak := func(o *metav1.ListOptions) { o.LabelSelector = sel.String() }
		rw = &relWatch{}
		if rw.pods, err = s.relatedInformer(podsResource, u.GetNamespace(), "Pod", tweak, typed[corev1.Pod]); err != nil {
			return Related{}, false, err
		}
		if withRS {
			if rw.replicaSets, err = s.relatedInformer(replicaSetsResource, u.GetNamespace(), "ReplicaSet", tweak, typed[appsv1.ReplicaSet]); err != nil {
				return Related{}, false, err
			}
		}
		s.related[key] = rw
	}
	synced = rw.pods.HasSynced()
	rel.Pods = matching(items[corev1.Pod](rw.pods), sel, func(p corev1.Pod) map[string]string { return p.Labels })
	if rw.replicaSets != nil {
		synced = synced && rw.replicaSets.HasSynced()
		rel.ReplicaSets = matching(items[appsv1.ReplicaSet](rw.replicaSets), sel, func(r appsv1.ReplicaSet) map[string]string { return r.Labels })
	}
	return rel, synced, nil
}

// relatedInformer is the run's shared informer of the namespace's pods or
// ReplicaSets when there is a Cache, else one of the wait's own that lists
// only the workload's.
func (s *session) relatedInformer(gvr schema.GroupVersionResource, ns, kind string, tweak func(*metav1.ListOptions), typedAs func(func(error)) cache.TransformFunc) (*informer, error) {
	if s.w.cache != nil && ns != "" {
		return s.w.cache.join(s, gvr, ns, kind, typedAs(func(err error) {
			s.w.cache.reportDecodeError(gvr, ns, kind, err)
		}))
	}
	return s.start(gvr, ns, tweak, typedAs(s.decodeError))
}

// matching keeps the items whose labels the selector matches: a shared
// informer holds the whole namespace's.
func matching[T any](all []T, sel labels.Selector, labelsOf func(T) map[string]string) []T {
	var out []T
	for _, t := range all {
		if sel.Matches(labels.Set(labelsOf(t))) {
			out = append(out, t)
		}
	}
	return out
}

// sortObjects orders objects by namespace and name, so messages are stable.
func sortObjects(objs []*unstructured.Unstructured) {
	sort.Slice(objs, func(i, j int) bool {
		if objs[i].GetNamespace() != objs[j].GetNamespace() {
			return objs[i].GetNamespace() < objs[j].GetNamespace()
		}
		return objs[i].GetName() < objs[j].GetName()
	})
}
