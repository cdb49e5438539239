package apps

import (
	"fmt"
	"maps"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// routeMissing says what a traffic-routed canary lacks ("" when none).
func (x *decider) routeMissing() string {
	r := routing(x.app)
	if r == nil {
		return ""
	}
	c := x.app.Spec.UpgradeStrategy.Canary
	path := "spec.upgradeStrategy.canary."
	switch {
	case x.o.StableService == nil:
		return fmt.Sprintf("service %s/%s not found: create it, or name the stable Service in %sstableService", x.app.Namespace, c.StableService, path)
	case x.o.CanaryService == nil:
		return fmt.Sprintf("service %s/%s not found: create it, or name another in %scanaryService", x.app.Namespace, c.CanaryService, path)
	case x.o.Route == nil:
		return fmt.Sprintf("httproute %s/%s not found: create it, or name another in %strafficRouting.gatewayAPI.httpRoute", x.app.Namespace, r.HTTPRoute, path)
	}
	return ""
}

// startTraffic records the routed canary's Services' selectors as the
// rollout found them.
func (x *decider) startTraffic() {
	x.st.Traffic = nil
	if routing(x.app) == nil {
		return
	}
	x.st.Traffic = &v1alpha1.AppTrafficStatus{
		StableSelector: maps.Clone(x.o.StableService.Spec.Selector),
		CanarySelector: maps.Clone(x.o.CanaryService.Spec.Selector),
	}
}

// servicesAt tells whether a routed canary's Services are set: the
// stable one pinned to the stable pods, the canary one on the canary's.
func (x *decider) servicesAt() bool {
	if routing(x.app) == nil {
		return true
	}
	return x.o.StableHash != "" && maps.Equal(x.o.StableService.Spec.Selector, pinned(x.st.Traffic.StableSelector, x.o.StableHash)) &&
		maps.Equal(x.o.CanaryService.Spec.Selector, canarySelector(x.st.Traffic))
}

// weighedAt tells whether the route sends weight to the canary.
func (x *decider) weighedAt(weight int32) bool {
	c := x.app.Spec.UpgradeStrategy.Canary
	return weighedAt(x.o.Route, c.StableService, c.CanaryService, weight)
}
