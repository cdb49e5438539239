package apps

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// httpRoutes is the HTTPRoute resource, read and written through the
// dynamic client (the Gateway API's types, not its clientset).
var httpRoutes = gatewayv1.SchemeGroupVersion.WithResource("httproutes")

// routeServices pins a routed canary's stable Service to the stable pods
// and points its canary Service at the canary's, before the canary's pods
// come: they never land in the stable Service.
func routeServices(ctx context.Context, t tenant, o Observed, st *v1alpha1.AppRolloutStatus) error {
	if routing(o.App) == nil {
		return nil
	}
	if err := setSelector(ctx, t, o.StableService, pinned(st.Traffic.StableSelector, o.StableHash)); err != nil {
		return err
	}
	return setSelector(ctx, t, o.CanaryService, canarySelector(st.Traffic))
}

// setWeights writes the route with weight percent to the canary Service.
func setWeights(ctx context.Context, t tenant, o Observed, weight int32) error {
	c := o.App.Spec.UpgradeStrategy.Canary
	want := weighRoute(o.Route, c.StableService, c.CanaryService, weight)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(gatewayv1.SchemeGroupVersion.String())
	u.SetKind("HTTPRoute")
	if _, err := t.dyn.Resource(httpRoutes).Namespace(want.Namespace).Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("set the weights of httproute %s: %w", want.Name, err)
	}
	return nil
}

// routeBack sends the whole route to the stable Service, gives the
// Services their selectors back and deletes the canary.
func routeBack(ctx context.Context, t tenant, o Observed, st *v1alpha1.AppRolloutStatus) error {
	// The stable Service was let go at the promotion; the canary one
	// selects as it did before the weights move, so neither share is
	// ever without endpoints.
	if err := setSelector(ctx, t, o.StableService, st.Traffic.StableSelector); err != nil {
		return err
	}
	if err := setSelector(ctx, t, o.CanaryService, st.Traffic.CanarySelector); err != nil {
		return err
	}
	if o.Route != nil {
		if err := setWeights(ctx, t, o, 0); err != nil {
			return err
		}
	}
	return deleteTrack(ctx, t.kube.AppsV1().Deployments(o.App.Namespace), o.Canary)
}

// getRoute reads the routed canary's HTTPRoute; nil when it does not
// exist.
func getRoute(ctx context.Context, t tenant, app *v1alpha1.AppRollout, name string) (*gatewayv1.HTTPRoute, error) {
	u, err := t.dyn.Resource(httpRoutes).Namespace(app.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	r := &gatewayv1.HTTPRoute{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r); err != nil {
		return nil, fmt.Errorf("httproute %s: %w", name, err)
	}
	return r, nil
}
