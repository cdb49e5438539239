// Package watchloop is the watch loop the set-judging gates share
// (podsRunning, pvcsBound, nodesReady) and the recreate step: an informer over one typed
// resource, a judge called after the first complete list and after every
// event, a deadline, and API errors told apart (transient: the informer
// retries; permanent: the check ends).
package watchloop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/klog/v2"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// Verdict is one look at the watched objects: done with an outcome, or not
// yet, with the state so far (what a timeout reports).
type Verdict struct {
	Done    bool
	Outcome step.Status
	Message string
}

func Waiting(format string, a ...any) Verdict {
	return Verdict{Message: fmt.Sprintf(format, a...)}
}

func Passed(format string, a ...any) Verdict {
	return Verdict{Done: true, Outcome: step.Succeeded, Message: fmt.Sprintf(format, a...)}
}

func Failed(format string, a ...any) Verdict {
	return Verdict{Done: true, Outcome: step.Failed, Message: fmt.Sprintf(format, a...)}
}

// errTimedOut marks the gate's own deadline, as opposed to the caller's
// context ending.
var errTimedOut = errors.New("gate timed out")

// Lister is the typed client's List and Watch of one resource.
type Lister struct {
	What  string // "pods in demo", for errors
	List  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	Watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
}

// Until runs an informer over l and judges the whole cache after the
// first complete list (first=true) and after every event, until a Verdict
// is done or timeout passes. Transient API errors are retried by the
// informer; a permanent one (forbidden, unauthorized…) ends the check
// with an error, since no wait can cure it.
func Until[T any](ctx context.Context, timeout time.Duration, l Lister, objType runtime.Object, judge func(objs []*T, first bool) Verdict) (step.Result, error) {
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
	defer cancel()

	api := &apiErrors{fail: fail}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			// The reflector lists at resourceVersion "0", the API
			// server's cache, which can predate a write just made: ask
			// for a consistent read (see internal/kube/informer.go).
			if o.ResourceVersion == "0" {
				o.ResourceVersion = ""
			}
			obj, err := l.List(ctx, o)
			return obj, api.note(err)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := l.Watch(ctx, o)
			return w, api.note(err)
		},
	}

	var (
		store cache.Store
		last  Verdict
	)
	look := func(first bool) (bool, error) {
		var objs []*T
		for _, o := range store.List() {
			if t, ok := o.(*T); ok {
				objs = append(objs, t)
			}
		}
		last = judge(objs, first)
		return last.Done, nil
	}
	err := untilWithSync(ctx, lw, objType,
		func(s cache.Store) (bool, error) { store = s; return look(true) },
		func(watch.Event) (bool, error) { return look(false) })
	switch cause := context.Cause(ctx); {
	case err == nil:
		return step.Result{Status: last.Outcome, Message: last.Message}, nil
	case errors.Is(cause, errTimedOut):
		state := last.Message
		if state == "" {
			state = "nothing listed yet"
			if e := api.lastError(); e != nil {
				state += fmt.Sprintf(" (last API error: %v)", e)
			}
		}
		return step.Failure("timed out after %s: %s", kube.ShortDuration(timeout), state), nil
	case cause != nil: // the caller's context ended, or a permanent API error
		return step.Result{}, fmt.Errorf("watch %s: %w", l.What, cause)
	default:
		return step.Result{}, fmt.Errorf("watch %s: %w", l.What, err)
	}
}

// apiErrors remembers the informer's last API error and ends the check on
// one that no retry cures.
type apiErrors struct {
	fail func(error)
	mu   sync.Mutex
	last error
}

func (a *apiErrors) note(err error) error {
	if err == nil {
		return nil
	}
	if isPermanent(err) {
		a.fail(err)
	}
	a.mu.Lock()
	a.last = err
	a.mu.Unlock()
	return err
}

func (a *apiErrors) lastError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// isPermanent tells API errors that no retry can cure.
func isPermanent(err error) bool {
	return apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) ||
		apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) ||
		apierrors.IsNotAcceptable(err) || apierrors.IsUnsupportedMediaType(err) ||
		apierrors.IsMethodNotSupported(err)
}

// Selecting builds the Lister of the objects that match a label selector
// (empty: all), from a typed client's List and Watch.
func Selecting[L runtime.Object](what, selector string,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) Lister {
	return Lister{
		What: what,
		List: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return list(ctx, o)
		},
		Watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return watchFn(ctx, o)
		},
	}
}

// untilWithSync is watchtools.UntilWithSync with a fast wait for the
// informer's initial list (kube.WaitSynced): client-go's polls every
// 100 ms, which every gate would pay.
func untilWithSync(ctx context.Context, lw cache.ListerWatcher, objType runtime.Object, precondition watchtools.PreconditionFunc, condition watchtools.ConditionFunc) error {
	indexer, informer, watcher, done := watchtools.NewIndexerInformerWatcherWithLogger(klog.FromContext(ctx), lw, objType)
	defer func() { <-done }() // the informer stops before the list-watch's clients go away
	defer watcher.Stop()
	if !kube.WaitSynced(ctx, informer.HasSynced) {
		return fmt.Errorf("unable to sync caches: %w", ctx.Err())
	}
	if ok, err := precondition(indexer); err != nil || ok {
		return err
	}
	_, err := watchtools.UntilWithoutRetry(ctx, watcher, condition)
	return err
}
