package crds_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
)

// The demo's plan files are valid UpgradePlans, and what the API server
// keeps is what the file says: no field is pruned (Helm values included),
// none is defaulted.
func TestDemoPlansAreAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, version := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		p, u := demoPlan(t, version, e.ns)
		if _, err := e.dyn.Resource(plans).Namespace(e.ns).Create(e.ctx, u, strict); err != nil {
			t.Fatalf("demo %s refused: %v", version, err)
		}
		back, err := e.dyn.Resource(plans).Namespace(e.ns).Get(e.ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(fromUnstructured[v1alpha1.UpgradePlan](t, back).Spec)
		want, _ := json.Marshal(p.Spec)
		if string(got) != string(want) {
			t.Errorf("demo %s's spec came back changed:\nsent: %s\ngot:  %s", version, want, got)
		}
	}
}

// spec navigates a plan's unstructured spec.
type spec map[string]any

func (s spec) stage(i int) map[string]any { return s["stages"].([]any)[i].(map[string]any) }
func (s spec) step(i, j int) map[string]any {
	return s.stage(i)["steps"].([]any)[j].(map[string]any)
}
func (s spec) gate(i, j int) map[string]any {
	return s.stage(i)["gates"].([]any)[j].(map[string]any)
}

// Each mistake a plan can make that needs no cluster to see is refused by
// the API server itself, with the field path, and where the CLI checks
// the same thing, in the CLI's words (checked against plan.Validate on
// the same plan, so the two cannot drift apart unnoticed).
func TestInvalidPlansAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const stepKinds = "set exactly one step kind: crds, manifests, image, helm, job, recreate, freeze, approval, pause, autopilot, distribute, clusterConfig, installation or helmUninstall"
	const gateKinds = "set exactly one gate kind: ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept, soak or metric"
	// Demo 1.1.0's stages: 0 crds, 1 control-plane (gates: ready, envKept), 2 schema
	// (a job), 3 addons, 4 approve-data-plane, 5 data-plane (fabric,
	// ipam and proxy after it; two gates), 6 gateways.
	for _, tc := range []struct {
		name   string
		edit   func(s spec)
		server string // the API server's error holds it
		cli    string // plan.Validate's errors hold it; "" when the CLI words it otherwise
	}{
		{name: "a step with two kinds",
			edit:   func(s spec) { s.step(1, 0)["manifests"] = map[string]any{"path": "templates/"} },
			server: "spec.stages[1].steps[0]: Forbidden: " + stepKinds + "; split this step in two",
			cli:    "spec.stages[1].steps[0]: Forbidden: " + stepKinds + "; split this step in two"},
		{name: "a step with no kind",
			edit:   func(s spec) { delete(s.step(0, 0), "crds") },
			server: "spec.stages[0].steps[0]: Required value: " + stepKinds,
			cli:    "spec.stages[0].steps[0]: Required value: " + stepKinds},
		{name: "a gate with no kind",
			edit:   func(s spec) { s.stage(1)["gates"] = []any{map[string]any{"timeout": "1m"}} },
			server: `spec.stages[1].gates[0]: Invalid value: "object": ` + gateKinds,
			cli:    gateKinds},
		{name: "a gate with two kinds",
			edit:   func(s spec) { s.gate(1, 0)["soak"] = map[string]any{"duration": "1m"} },
			server: `spec.stages[1].gates[0]: Invalid value: "object": ` + gateKinds,
			cli:    gateKinds},
		{name: "a metric gate measured three times with no interval",
			edit: func(s spec) {
				s.stage(1)["gates"] = []any{map[string]any{"metric": map[string]any{"name": "errors", "count": 3,
					"provider": map[string]any{"prometheus": map[string]any{"address": "http://prometheus:9090", "query": "up"}}}}}
			},
			server: `spec.stages[1].gates[0].metric: Invalid value: "object": a count above 1 needs an interval between the measurements`,
			cli:    "spec.stages[1].gates[0].metric.interval: Required value: a count above 1 needs an interval"},
		{name: "two stages of one name",
			edit:   func(s spec) { s.stage(1)["name"] = "crds" },
			server: `spec.stages[1]: Duplicate value: {"name":"crds"}`,
			cli:    `spec.stages[1].name: Duplicate value: "crds"`},
		{name: "two steps of one name in a stage",
			edit:   func(s spec) { s.step(5, 0)["name"] = "fabric" },
			server: `spec.stages[5].steps[1]: Duplicate value: {"name":"fabric"}`,
			cli:    `Duplicate value: "fabric`},
		{name: "a step name used in two stages",
			edit:   func(s spec) { s.step(6, 0)["name"] = "crds" },
			server: `spec: Invalid value: "object": give each step its own name, unique across the plan`,
			cli:    "give each step its own name, unique across the plan"},
		{name: "a duration that does not parse",
			edit:   func(s spec) { s.step(1, 0)["timeout"] = "5 minutes" },
			server: `spec.stages[1].steps[0].timeout: Invalid value: "string": use a Go duration such as 30s, 5m or 1h30m`},
		{name: "a negative duration",
			edit:   func(s spec) { s.gate(5, 1)["timeout"] = "-5s" },
			server: `spec.stages[5].gates[1].timeout: Invalid value: "string": must be a positive duration such as 30s or 5m`,
			cli:    `spec.stages[5].gates[1].timeout: Invalid value: "-5s": must be a positive duration such as 30s or 5m`},
		{name: "a source with a path and a URL",
			edit:   func(s spec) { s.step(0, 0)["crds"].(map[string]any)["url"] = "https://example.com/crds.yaml" },
			server: `spec.stages[0].steps[0].crds: Invalid value: "object": set exactly one of path, url, inline, configMap or secret`,
			cli:    "spec.stages[0].steps[0].crds: Invalid value: \"2 sources\": set exactly one of path, url, inline, configMap or secret"},
		{name: "a rollback job without a source",
			edit:   func(s spec) { s.step(2, 0)["job"].(map[string]any)["rollbackJob"] = map[string]any{} },
			server: `spec.stages[2].steps[0].job.rollbackJob: Invalid value: "object": set exactly one of path, url, inline, configMap or secret`,
			cli:    `spec.stages[2].steps[0].job.rollbackJob: Invalid value: "0 sources": set exactly one of path, url, inline, configMap or secret`},
		{name: "a source with a configMap and a path",
			edit: func(s spec) {
				s.step(5, 0)["manifests"].(map[string]any)["configMap"] = map[string]any{"name": "gateway-templates"}
			},
			server: `spec.stages[5].steps[0].manifests: Invalid value: "object": set exactly one of path, url, inline, configMap or secret`,
			cli:    "spec.stages[5].steps[0].manifests: Invalid value: \"2 sources\": set exactly one of path, url, inline, configMap or secret"},
		{name: "a secret name the API server cannot hold",
			edit: func(s spec) {
				s.step(5, 0)["manifests"] = map[string]any{"secret": map[string]any{"name": "Gateway_Templates"}}
			},
			server: `spec.stages[5].steps[0].manifests.secret.name: Invalid value: "Gateway_Templates"`,
			cli:    `spec.stages[5].steps[0].manifests.secret.name: Invalid value: "Gateway_Templates"`},
		{name: "a configMap key with a slash",
			edit: func(s spec) {
				s.step(5, 0)["manifests"] = map[string]any{"configMap": map[string]any{"name": "t", "key": "a/b.yaml"}}
			},
			server: `spec.stages[5].steps[0].manifests.configMap.key: Invalid value: "a/b.yaml"`,
			cli:    `spec.stages[5].steps[0].manifests.configMap.key: Invalid value: "a/b.yaml"`},
		{name: "valuesFrom of an unknown kind",
			edit: func(s spec) {
				s.step(3, 0)["helm"].(map[string]any)["valuesFrom"] = []any{map[string]any{"kind": "configmap", "name": "v"}}
			},
			server: `spec.stages[3].steps[0].helm.valuesFrom[0].kind: Unsupported value: "configmap": supported values: "ConfigMap", "Secret"`,
			cli:    `spec.stages[3].steps[0].helm.valuesFrom[0].kind: Unsupported value: "configmap": supported values: "ConfigMap", "Secret"`},
		{name: "caFile without a URL",
			edit:   func(s spec) { s.step(5, 0)["manifests"].(map[string]any)["caFile"] = "ca.pem" },
			server: "caFile and insecureSkipVerify apply to url only",
			cli:    "caFile and insecureSkipVerify apply to url only"},
		{name: "dependsOn a step of another stage",
			edit:   func(s spec) { s.step(5, 2)["dependsOn"] = []any{"crds"} },
			server: `spec.stages[5]: Invalid value: "object": dependsOn names steps of the same stage`,
			cli:    "dependsOn names steps of the same stage"},
		{name: "a ready gate with a name and a selector",
			edit:   func(s spec) { s.gate(1, 0)["ready"].(map[string]any)["selector"] = "app=x" },
			server: `spec.stages[1].gates[0].ready: Invalid value: "object": set exactly one of name or selector`,
			cli:    "spec.stages[1].gates[0].ready: Forbidden: set exactly one of name or selector"},
		{name: "an envKept gate on a kind without a pod template",
			edit:   func(s spec) { s.gate(1, 1)["envKept"].(map[string]any)["kind"] = "ConfigMap" },
			server: `spec.stages[1].gates[1].envKept.kind: Unsupported value: "ConfigMap": supported values: "Deployment", "DaemonSet", "StatefulSet"`,
			cli:    `spec.stages[1].gates[1].envKept.kind: Unsupported value: "ConfigMap": supported values: "Deployment", "DaemonSet", "StatefulSet"`},
		{name: "an envKept gate naming a variable twice",
			edit:   func(s spec) { s.gate(1, 1)["envKept"].(map[string]any)["names"] = []any{"CLUSTER_ID", "CLUSTER_ID"} },
			server: `spec.stages[1].gates[1].envKept.names[1]: Duplicate value: "CLUSTER_ID"`,
			cli:    `spec.stages[1].gates[1].envKept.names[1]: Duplicate value: "CLUSTER_ID": list each variable once`},
		{name: "an envKept gate without a container",
			edit:   func(s spec) { delete(s.gate(1, 1)["envKept"].(map[string]any), "container") },
			server: `spec.stages[1].gates[1].envKept.container: Required value`,
			cli:    `spec.stages[1].gates[1].envKept.container: Required value: the container whose variables are kept`},
		{name: "an unknown severity",
			edit:   func(s spec) { s.gate(1, 0)["severity"] = "fatal" },
			server: `spec.stages[1].gates[0].severity: Unsupported value: "fatal": supported values: "blocking", "warning", "info"`,
			cli:    `spec.stages[1].gates[0].severity: Unsupported value: "fatal": supported values: "blocking", "warning", "info"`},
		{name: "an unknown field",
			edit:   func(s spec) { s.stage(0)["stepz"] = []any{} },
			server: `unknown field "spec.stages[0].stepz"`},
		{name: "more stages than the bound",
			edit: func(s spec) {
				var stages []any
				for i := range 33 {
					stages = append(stages, map[string]any{"name": fmt.Sprint("s", i), "steps": []any{map[string]any{"name": fmt.Sprint("p", i), "pause": map[string]any{"duration": "1s"}}}})
				}
				s["stages"] = stages
			},
			server: "spec.stages: Too many: 33: must have at most 32 items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, u := demoPlan(t, "1.1.0", e.ns)
			u.SetName("invalid")
			tc.edit(spec(u.Object["spec"].(map[string]any)))
			_, err := e.dyn.Resource(plans).Namespace(e.ns).Create(e.ctx, u, strict)
			switch {
			case err == nil:
				t.Errorf("accepted; want refused with %q", tc.server)
			case !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err):
				t.Errorf("refused, but not as invalid: %v", err)
			case !strings.Contains(err.Error(), tc.server):
				t.Errorf("error lacks %q:\n%v", tc.server, err)
			}
			if tc.cli != "" {
				if got := cliErrors(t, u); !strings.Contains(got, tc.cli) {
					t.Errorf("the CLI's errors lack %q:\n%s", tc.cli, got)
				}
			}
		})
	}
}

// cliErrors is what the CLI's static validation says of the plan.
func cliErrors(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	p := fromUnstructured[v1alpha1.UpgradePlan](t, u)
	errs := plan.Validate(&plan.Loaded{Plan: p, BaseDir: filepath.Join(repoRoot, "examples", "demo", "1.1.0")})
	if len(errs) == 0 {
		return "(no error)"
	}
	return errs.ToAggregate().Error()
}
