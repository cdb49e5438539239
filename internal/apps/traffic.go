package apps

import (
	"maps"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// routing is a canary's Gateway API routing, nil without one.
func routing(app *v1alpha1.AppRollout) *v1alpha1.GatewayAPIRouting {
	if !canaryEnabled(app) {
		return nil
	}
	tr := app.Spec.UpgradeStrategy.Canary.TrafficRouting
	if tr == nil {
		return nil
	}
	return tr.GatewayAPI
}

// canarySelector selects the canary's pods: the stable Service's
// selector as found, and the canary track.
func canarySelector(st *v1alpha1.AppTrafficStatus) map[string]string {
	sel := maps.Clone(st.StableSelector)
	if sel == nil {
		sel = map[string]string{}
	}
	sel[LabelTrack] = trackCanary
	return sel
}

// refersTo tells whether a backend is the Service name.
func refersTo(b gatewayv1.HTTPBackendRef, name string) bool {
	ref := b.BackendObjectReference
	return string(ref.Name) == name && (ref.Group == nil || *ref.Group == "") && (ref.Kind == nil || *ref.Kind == "Service") && ref.Namespace == nil
}

// weighRoute is the route with each rule that sends to stable sending
// weight percent to canary (its backend added beside stable's, same port,
// where missing) and the rest to stable.
func weighRoute(route *gatewayv1.HTTPRoute, stable, canary string, weight int32) *gatewayv1.HTTPRoute {
	out := route.DeepCopy()
	for i := range out.Spec.Rules {
		refs := out.Spec.Rules[i].BackendRefs
		s, c := -1, -1
		for j := range refs {
			switch {
			case refersTo(refs[j], stable):
				s = j
			case refersTo(refs[j], canary):
				c = j
			}
		}
		if s < 0 {
			continue
		}
		if c < 0 {
			added := *refs[s].DeepCopy()
			added.Name = gatewayv1.ObjectName(canary)
			refs = append(refs, added)
			c = len(refs) - 1
		}
		sw, cw := 100-weight, weight
		refs[s].Weight, refs[c].Weight = &sw, &cw
		out.Spec.Rules[i].BackendRefs = refs
	}
	return out
}

// weighedAt tells whether every rule of the route that sends to stable
// sends weight percent to canary and the rest to stable.
func weighedAt(route *gatewayv1.HTTPRoute, stable, canary string, weight int32) bool {
	if route == nil {
		return false
	}
	want := weighRoute(route, stable, canary, weight)
	for i := range route.Spec.Rules {
		if len(route.Spec.Rules[i].BackendRefs) != len(want.Spec.Rules[i].BackendRefs) {
			return false
		}
		for j, b := range route.Spec.Rules[i].BackendRefs {
			w := want.Spec.Rules[i].BackendRefs[j].Weight
			if (b.Weight == nil) != (w == nil) || b.Weight != nil && *b.Weight != *w {
				return false
			}
		}
	}
	return true
}
