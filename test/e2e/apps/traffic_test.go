package apps_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// installHTTPRoutes installs the Gateway API's HTTPRoute CRD from the
// Gateway API Go module this project builds with (the standard channel's
// file, as released), so the API server validates every route Upshift
// writes.
func (e *env) installHTTPRoutes() {
	e.t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		e.t.Fatalf("find the Gateway API module: %v", err)
	}
	crd := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml")
	if out, err := e.kubectl("", "apply", "--server-side", "-f", crd); err != nil {
		e.t.Fatalf("install %s: %v\n%s", crd, err, out)
	}
	// Until it is served: kubectl wait can come before the CRD is known.
	var last string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := e.kubectl("", "get", "httproutes", "-A")
		if err == nil {
			return
		}
		last = out
	}
	e.t.Fatalf("the HTTPRoute CRD is not served after a minute:\n%s", last)
}

// A canary routed by a Gateway API HTTPRoute: at each step the route's
// weights are the step's, the canary Service serves only the new pods and
// the stable one only the old, at full strength; promoted, the route is
// the stable Service's again and the Services are as they were.
func TestCanaryMovesTheHTTPRouteWeights(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installHTTPRoutes()
	e.grant("deployer")
	e.deployment("shop", "registry.example.com/shop:v1", 5)
	e.service("shop")
	e.service("shop-canary")
	route := `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop}
spec:
  rules:
  - backendRefs:
    - {name: shop, port: 80}
`
	if out, err := e.kubectl(route, "apply", "-n", e.ns, "-f", "-"); err != nil {
		t.Fatalf("create the HTTPRoute: %v\n%s", err, out)
	}
	e.startController("ctl-route")
	app := canaryRollout(e.ns, "shop", "v2", []v1alpha1.AppCanaryStep{{Weight: 20, Pause: 600}, {Weight: 60, Pause: 600}, {Weight: 100}})
	c := app.Spec.UpgradeStrategy.Canary
	c.StableService, c.CanaryService = "shop", "shop-canary"
	c.TrafficRouting = &v1alpha1.AppTrafficRouting{GatewayAPI: &v1alpha1.GatewayAPIRouting{HTTPRoute: "shop"}}
	if err := e.kc.Create(e.ctx, app); err != nil {
		t.Fatal(err)
	}
	for i, w := range []int32{20, 60} {
		e.waitStep("shop", int32(i), w)
		if got := e.weights("shop"); got["shop"] != 100-w || got["shop-canary"] != w {
			t.Errorf("step %d: route weights %v, want shop %d, shop-canary %d", i+1, got, 100-w, w)
		}
		canary := (5*w + 99) / 100
		e.wantReplicaSets(map[string]int32{"shop:registry.example.com/shop:v1": 5, "shop-canary:registry.example.com/shop:v2": canary})
		e.waitServes("shop", "registry.example.com/shop:v1", 5)
		e.waitServes("shop-canary", "registry.example.com/shop:v2", int(canary))
		e.annotate("shop", v1alpha1.AnnotationPromote, string(rune('a'+i)))
	}
	e.waitFor("shop", "Ready", time.Minute, func(a *v1alpha1.AppRollout) bool {
		return meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionReady)
	})
	if got := e.weights("shop"); got["shop"] != 100 || got["shop-canary"] != 0 {
		t.Errorf("route weights after the promotion: %v, want all to shop", got)
	}
	for _, s := range []string{"shop", "shop-canary"} {
		if sel := e.getService(s).Spec.Selector; len(sel) != 1 || sel["app"] != "shop" {
			t.Errorf("service %s selector after the rollout: %v, want it as it was", s, sel)
		}
	}
	e.waitServes("shop", "registry.example.com/shop:v2", 5)
}

// weights are the HTTPRoute's first rule's weights, by Service.
func (e *env) weights(name string) map[string]int32 {
	e.t.Helper()
	out, err := e.kubectl("", "get", "-n", e.ns, "httproute", name, "-o", "json")
	if err != nil {
		e.t.Fatalf("get httproute %s: %v\n%s", name, err, out)
	}
	var u map[string]any
	if err := json.Unmarshal([]byte(out), &u); err != nil {
		e.t.Fatal(err)
	}
	r := &gatewayv1.HTTPRoute{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, r); err != nil {
		e.t.Fatal(err)
	}
	got := map[string]int32{}
	for _, b := range r.Spec.Rules[0].BackendRefs {
		w := int32(1) // the Gateway API's default weight
		if b.Weight != nil {
			w = *b.Weight
		}
		got[string(b.Name)] = w
	}
	return got
}
