package apps

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// workers reconcile rollouts side by side: a reconcile mostly waits on
// the API server (a few requests in a row), so more workers than cores
// keep a hundred rollouts moving at once (make bench-apps: reaction p99
// over 100 changed rollouts, 8 workers against 32, in docs/benchmarks.md).
const workers = 32

// afterIndex indexes the cache's AppRollouts by spec.after, so the ones
// after a rollout are found without listing its namespace.
const afterIndex = "spec.after"

// SetupWithManager reconciles AppRollouts on changes that pass changes
// (a person's: the spec, the action annotations, a re-list), and the
// neighbours of any rollout whose status moved: what one member of a
// group does is what the others decide on.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, changes predicate.Predicate) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.AppRollout{}, afterIndex, func(o client.Object) []string {
		if a := o.(*v1alpha1.AppRollout).Spec.After; a != "" {
			return []string{a}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("approllout").
		For(&v1alpha1.AppRollout{}, builder.WithPredicates(changes)).
		Watches(&v1alpha1.AppRollout{}, handler.EnqueueRequestsFromMapFunc(r.neighbours)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// neighbours are the rollouts next to o in its group: the one it comes
// after, and those after it.
func (r *Reconciler) neighbours(ctx context.Context, o client.Object) []reconcile.Request {
	a := o.(*v1alpha1.AppRollout)
	var out []reconcile.Request
	if a.Spec.After != "" {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: a.Namespace, Name: a.Spec.After}})
	}
	next, _ := r.next(ctx, a)
	for _, n := range next {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(n)})
	}
	return out
}

// groupOf reads a rollout's neighbours from the cache.
func (r *Reconciler) groupOf(ctx context.Context, app *v1alpha1.AppRollout) (before *v1alpha1.AppRollout, next []*v1alpha1.AppRollout, err error) {
	if app.Spec.After != "" {
		b := &v1alpha1.AppRollout{}
		switch err := r.cached.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Spec.After}, b); {
		case err == nil:
			before = b
		case client.IgnoreNotFound(err) != nil:
			return nil, nil, err
		}
	}
	next, err = r.next(ctx, app)
	return before, next, err
}

// next are the rollouts whose spec.after names app.
func (r *Reconciler) next(ctx context.Context, app *v1alpha1.AppRollout) ([]*v1alpha1.AppRollout, error) {
	list := &v1alpha1.AppRolloutList{}
	if err := r.cached.List(ctx, list, client.InNamespace(app.Namespace), client.MatchingFields{afterIndex: app.Name}); err != nil {
		return nil, err
	}
	out := make([]*v1alpha1.AppRollout, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}
