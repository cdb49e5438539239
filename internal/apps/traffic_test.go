package apps

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// routeWeights are the weights of the route's first rule, by Service.
func routeWeights(r *gatewayv1.HTTPRoute) map[string]int32 {
	out := map[string]int32{}
	for _, b := range r.Spec.Rules[0].BackendRefs {
		if b.Weight != nil {
			out[string(b.Name)] = *b.Weight
		}
	}
	return out
}

// A routed canary moves the route's weights step by step, each once the
// step's canary pods are ready, keeps the stable pods at full strength,
// and at the end sends the whole route back to the stable Service.
func TestRoutedCanaryMovesTheWeights(t *testing.T) {
	spec := seedSpec()
	spec.UpgradeStrategy.MigrationJob = nil
	c := spec.UpgradeStrategy.Canary
	c.Steps = []v1alpha1.AppCanaryStep{{Weight: 10, Pause: 60}, {Weight: 50, Pause: 60}, {Weight: 100}}
	c.StableService, c.CanaryService = "shop", "shop-canary"
	c.TrafficRouting = &v1alpha1.AppTrafficRouting{GatewayAPI: &v1alpha1.GatewayAPIRouting{HTTPRoute: "shop"}}
	w := newWorld(t, spec, 10, "registry.example.com/shop:v1.0.0")
	sel := map[string]string{"app": "shop"}
	w.stableSvc = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: corev1.ServiceSpec{Selector: sel}}
	w.canarySvc = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shop-canary"}, Spec: corev1.ServiceSpec{Selector: sel}}
	w.route = &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: gatewayv1.HTTPRouteSpec{Rules: []gatewayv1.HTTPRouteRule{{
		BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "shop"}}}},
	}}}}
	w.run(4)
	w.wantTrace("Deploying capture", "Deploying set canary 10% 1+10", "Deploying set weights", "Deploying none")
	if got := routeWeights(w.route); got["shop"] != 90 || got["shop-canary"] != 10 {
		t.Errorf("weights at 10%%: %v", got)
	}
	if w.stableSvc.Spec.Selector[LabelPodTemplateHash] == "" || w.canarySvc.Spec.Selector[LabelTrack] != trackCanary {
		t.Errorf("services: stable %v, canary %v", w.stableSvc.Spec.Selector, w.canarySvc.Spec.Selector)
	}
	w.run(3)
	w.wantTrace("Deploying set canary 50% 5+10", "Deploying set weights", "Deploying none")
	if got := routeWeights(w.route); got["shop"] != 50 || got["shop-canary"] != 50 {
		t.Errorf("weights at 50%%: %v", got)
	}
	w.run(5)
	w.wantTrace("HealthChecking deploy registry.example.com/shop:v2.0.0", "Healthy route back")
	if got := routeWeights(w.route); got["shop"] != 100 || got["shop-canary"] != 0 || w.canary != nil || len(w.stableSvc.Spec.Selector) != 1 {
		t.Errorf("after: weights %v, canary %v, stable selector %v", got, w.canary, w.stableSvc.Spec.Selector)
	}
}
