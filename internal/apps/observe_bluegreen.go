package apps

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// observeTraffic reads a traffic-routed canary's Services, its HTTPRoute
// and the pod-template-hash of the Deployment's current ReplicaSet.
func observeTraffic(ctx context.Context, t tenant, o *Observed) error {
	app := o.App
	r := routing(app)
	if r == nil || app.Status.Phase == v1alpha1.AppFailed {
		return nil
	}
	c := app.Spec.UpgradeStrategy.Canary
	svcs := t.kube.CoreV1().Services(app.Namespace)
	var err error
	if o.StableService, err = get(ctx, svcs.Get, c.StableService, "services", app); err != nil {
		return err
	}
	if o.CanaryService, err = get(ctx, svcs.Get, c.CanaryService, "services", app); err != nil {
		return err
	}
	if o.Route, err = getRoute(ctx, t, app, r.HTTPRoute); apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		o.Route, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("%s: get httproute %s: %w", serviceAccountOf(app), r.HTTPRoute, err)
	}
	if app.Status.Phase == v1alpha1.AppDeploying || app.Status.Phase == v1alpha1.AppMigrating {
		o.StableHash, err = currentHash(ctx, t, o.Deployment)
	}
	return err
}

// observeBlueGreen reads a blue-green rollout's Services, its preview
// and the pod-template-hash of the Deployment's current ReplicaSet.
func observeBlueGreen(ctx context.Context, t tenant, o *Observed) error {
	app := o.App
	bg := blueGreen(app)
	if bg == nil || app.Status.Phase == v1alpha1.AppFailed { // a rollback restores the Services from the backup
		return nil
	}
	svcs := t.kube.CoreV1().Services(app.Namespace)
	var err error
	if o.ActiveService, err = get(ctx, svcs.Get, bg.ActiveService, "services", app); err != nil {
		return err
	}
	if bg.PreviewService != "" {
		if o.PreviewService, err = get(ctx, svcs.Get, bg.PreviewService, "services", app); err != nil {
			return err
		}
	}
	if app.Status.Phase != v1alpha1.AppDeploying && app.Status.Phase != v1alpha1.AppHealthChecking {
		return nil
	}
	if o.Preview, err = get(ctx, t.kube.AppsV1().Deployments(app.Namespace).Get, previewName(app), "deployments", app); err != nil {
		return err
	}
	o.StableHash, err = currentHash(ctx, t, o.Deployment)
	return err
}

// currentHash is the pod-template-hash of the Deployment's ReplicaSet of
// its current revision ("" while there is none).
func currentHash(ctx context.Context, t tenant, d *appsv1.Deployment) (string, error) {
	if d == nil || d.Spec.Selector == nil {
		return "", nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return "", err
	}
	list, err := t.kube.AppsV1().ReplicaSets(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return "", fmt.Errorf("list replicasets of deployment %s (grant list on replicasets): %w", d.Name, err)
	}
	const revision = "deployment.kubernetes.io/revision"
	for i := range list.Items {
		rs := &list.Items[i]
		if metav1.IsControlledBy(rs, d) && rs.Annotations[revision] == d.Annotations[revision] {
			return rs.Labels[LabelPodTemplateHash], nil
		}
	}
	return "", nil
}
