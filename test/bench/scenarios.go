//go:build bench

package bench

import (
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// scenario is one upgrade, made by Upshift and by the runbook script it
// replaces, each from a fresh cluster the admin brought to the start
// version.
type scenario struct {
	name string
	// install is the plan the admin applies first (not timed).
	install string
	// upshift is Upshift's run: the binary's commands in order.
	upshift []command
	// plan names the run, so its record's writes can be told apart.
	plan string
	// script is the runbook; scriptEnv what it needs besides KUBECONFIG,
	// KUBECTL and HELM.
	script    string
	scriptEnv []string
	target    target
}

// command is one invocation of the upshift binary.
type command struct {
	args  []string
	exit  int
	timed bool // counts toward wall time, requests and bytes
}

func scenarios(root string) []scenario {
	demo := filepath.Join(root, "examples", "demo")
	demoPlan := filepath.Join(demo, "1.1.0", "plan.yaml")
	liqo := filepath.Join(root, "test", "bench", "liqo")
	liqoPlan := filepath.Join(liqo, "v1.1.0", "plan.yaml")
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	daemonsets := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	return []scenario{
		{
			// The demo platform 1.0.0 -> 1.1.0: CRDs, the controller-manager,
			// a migration Job, a Helm add-on, an approval, the data plane
			// (ipam and proxy side by side) and the tenants' gateways
			// re-created.
			name:    "demo",
			install: filepath.Join(demo, "1.0.0", "plan.yaml"),
			plan:    "demo-1.1.0",
			upshift: []command{
				{args: []string{"apply", "-f", demoPlan, "--no-wait", "-o", "json"}, exit: 4, timed: true}, // stops at the approval
				{args: []string{"approve", "demo-1.1.0"}},
				{args: []string{"apply", "-f", demoPlan, "-o", "json"}, timed: true},
			},
			script:    filepath.Join(root, "test", "bench", "upgrade-1.1.0.sh"),
			scriptEnv: []string{"DEMO=" + filepath.Join(demo, "1.1.0")},
			target: target{
				images: []image{
					{deployments, "demo-system", "demo-controller-manager", "manager", "example.com/demo/controller-manager:1.1.0"},
					{daemonsets, "demo-system", "demo-fabric", "fabric", "example.com/demo/fabric:1.1.0"},
					{deployments, "demo-system", "demo-ipam", "ipam", "example.com/demo/ipam:1.1.0"},
					{deployments, "demo-system", "demo-proxy", "proxy", "example.com/demo/proxy:1.1.0"},
					{deployments, "demo-tenant-a", "demo-gateway", "gateway", "example.com/demo/gateway:1.1.0"},
					{deployments, "demo-tenant-b", "demo-gateway", "gateway", "example.com/demo/gateway:1.1.0"},
				},
				versions: []versioned{{crds, "", "app.kubernetes.io/part-of=demo", 3, "1.1.0"}},
			},
		},
		{
			// The Liqo-shaped platform v1.0.0 -> v1.1.0, sequential as in
			// Liqo's runbook: 28 CRDs, then each component in turn.
			name:      "liqo",
			install:   filepath.Join(liqo, "v1.0.0", "plan.yaml"),
			plan:      "liqo-1.1.0",
			upshift:   []command{{args: []string{"apply", "-f", liqoPlan, "-o", "json"}, timed: true}},
			script:    filepath.Join(liqo, "upgrade-1.1.0.sh"),
			scriptEnv: []string{"LIQO=" + filepath.Join(liqo, "v1.1.0")},
			target: target{
				images: []image{
					{deployments, "liqo", "liqo-controller-manager", "controller-manager", "ghcr.io/liqotech/liqo-controller-manager:v1.1.0"},
					{deployments, "liqo", "liqo-webhook", "webhook", "ghcr.io/liqotech/webhook:v1.1.0"},
					{deployments, "liqo", "liqo-crd-replicator", "crd-replicator", "ghcr.io/liqotech/crd-replicator:v1.1.0"},
					{deployments, "liqo", "liqo-metric-agent", "metric-agent", "ghcr.io/liqotech/metric-agent:v1.1.0"},
					{deployments, "liqo", "liqo-ipam", "ipam", "ghcr.io/liqotech/ipam:v1.1.0"},
					{deployments, "liqo", "liqo-proxy", "proxy", "ghcr.io/liqotech/proxy:v1.1.0"},
					{daemonsets, "liqo", "liqo-fabric", "fabric", "ghcr.io/liqotech/fabric:v1.1.0"},
				},
				versions: []versioned{
					{crds, "", "app.kubernetes.io/part-of=liqo", 28, "v1.1.0"},
					{schema.GroupVersionResource{Group: "networking.liqo.io", Version: "v1beta1", Resource: "wggatewayservertemplates"}, "liqo", "app.kubernetes.io/part-of=liqo", 1, "v1.1.0"},
					{schema.GroupVersionResource{Group: "networking.liqo.io", Version: "v1beta1", Resource: "wggatewayclienttemplates"}, "liqo", "app.kubernetes.io/part-of=liqo", 1, "v1.1.0"},
				},
			},
		},
	}
}
