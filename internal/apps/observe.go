package apps

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// observe reads what Decide needs of the rollout's objects, as its
// ServiceAccount: the Deployment always, the canary while one may exist,
// and the Jobs of the phase it is in.
func observe(ctx context.Context, t tenant, o *Observed) error {
	app, st := o.App, &o.App.Status
	deps := t.kube.AppsV1().Deployments(app.Namespace)
	var err error
	if o.Deployment, err = get(ctx, deps.Get, deploymentName(app), "deployments", app); err != nil {
		return err
	}
	if moving(st.Phase) { // also when the canary was turned off mid-rollout: promotion deletes it

		if o.Canary, err = get(ctx, deps.Get, canaryName(app), "deployments", app); err != nil {
			return err
		}
	}
	if err := observeBlueGreen(ctx, t, o); err != nil {
		return err
	}
	if err := observeTraffic(ctx, t, o); err != nil {
		return err
	}
	jobs := t.kube.BatchV1().Jobs(app.Namespace)
	if st.Phase == v1alpha1.AppMigrating {
		if o.Migration, err = get(ctx, jobs.Get, MigrationJobName(app, st.TargetVersion, st.Attempt), "jobs", app); err != nil {
			return err
		}
	}
	if st.Phase == v1alpha1.AppFailed && st.Rollback != nil && st.Rollback.Restored && st.MigrationJob != "" {
		if o.DownMigration, err = get(ctx, jobs.Get, DownMigrationJobName(app, st.TargetVersion, st.Attempt), "jobs", app); err != nil {
			return err
		}
	}
	return nil
}

// get reads one object; nil when it does not exist.
func get[T interface {
	*appsv1.Deployment | *batchv1.Job | *corev1.Service
}](ctx context.Context, read func(context.Context, string, metav1.GetOptions) (T, error), name, resource string, app *v1alpha1.AppRollout) (T, error) {
	obj, err := read(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("%s may not get %s in %s: grant it get, create, update and delete on deployments and jobs, and on secrets for the backups (docs/apps.md): %w", serviceAccountOf(app), resource, app.Namespace, err)
	case err != nil:
		return nil, fmt.Errorf("get %s %s: %w", resource, name, err)
	}
	return obj, nil
}

// serviceAccountOf names the ServiceAccount a rollout acts as, for
// messages.
func serviceAccountOf(app *v1alpha1.AppRollout) string {
	sa := app.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	return "serviceaccount " + app.Namespace + "/" + sa
}

// Idle tells whether a rollout has nothing to do until it changes: it
// is at its version, or stopped for a person, with no action asked, not
// resuming, and nothing for it to do for its group (before and next are
// its neighbours there). Its reconcile reads nothing else.
func Idle(app, before *v1alpha1.AppRollout, next []*v1alpha1.AppRollout) bool {
	st := &app.Status
	if rolledBackAfter(st, next) != nil || recovered(app, before) {
		return false
	}
	for _, k := range v1alpha1.AppActionAnnotations {
		if v, ok := app.Annotations[k]; ok && v != st.HandledActions[k] {
			return false
		}
	}
	if st.ObservedGeneration != app.Generation || st.PausedAt != nil && !app.Spec.Paused {
		return false
	}
	switch st.Phase {
	case v1alpha1.AppHealthy:
		return st.CurrentVersion == app.Spec.Version
	case v1alpha1.AppRolledBack:
		return st.TargetVersion == app.Spec.Version
	case v1alpha1.AppFailed:
		return st.Rollback != nil && st.Rollback.Done
	}
	return app.Spec.Paused && st.PausedAt != nil
}
