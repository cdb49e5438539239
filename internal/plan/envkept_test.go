package plan

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestEnvKeptGateRules(t *testing.T) {
	ok := v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: "liqo", Name: "liqo-controller-manager", Container: "controller-manager",
		Names: []string{"POD_NAMESPACE", "CLUSTER_ID", "TENANT_NAMESPACE", "CLUSTER_ROLE", "ENABLE_IPAM", "LOG_LEVEL"}}
	with := func(change func(g *v1alpha1.EnvKeptGate)) v1alpha1.Gate {
		g := ok
		g.Names = append([]string(nil), ok.Names...)
		change(&g)
		return v1alpha1.Gate{EnvKept: &g}
	}
	for _, tc := range []struct {
		name string
		gate v1alpha1.Gate
		want []string // exact problems, in order
	}{
		{name: "the Liqo list", gate: v1alpha1.Gate{EnvKept: &ok}},
		{name: "every variable", gate: with(func(g *v1alpha1.EnvKeptGate) { g.Names = nil })},
		{name: "a StatefulSet, dotted names", gate: with(func(g *v1alpha1.EnvKeptGate) { g.Kind, g.Names = "StatefulSet", []string{"app.mode", "-x"} })},
		{name: "nothing set", gate: v1alpha1.Gate{EnvKept: &v1alpha1.EnvKeptGate{}},
			want: []string{
				`g.envKept.kind: Unsupported value: "": supported values: "Deployment", "DaemonSet", "StatefulSet"`,
				"g.envKept.namespace: Required value: the workload's namespace",
				"g.envKept.name: Required value: the workload's name",
				"g.envKept.container: Required value: the container whose variables are kept, e.g. controller-manager",
			}},
		{name: "a kind that has no pod template", gate: with(func(g *v1alpha1.EnvKeptGate) { g.Kind = "ConfigMap" }),
			want: []string{`g.envKept.kind: Unsupported value: "ConfigMap": supported values: "Deployment", "DaemonSet", "StatefulSet"`}},
		{name: "names the API server would not take", gate: with(func(g *v1alpha1.EnvKeptGate) {
			g.Namespace, g.Name, g.Container = "Liqo", "Manager", "Controller_Manager"
		}),
			want: []string{
				`g.envKept.namespace: Invalid value: "Liqo": not a namespace name: a lowercase RFC 1123 label`,
				`g.envKept.name: Invalid value: "Manager": not a workload name: a lowercase RFC 1123 subdomain`,
				`g.envKept.container: Invalid value: "Controller_Manager": not a container name: a lowercase RFC 1123 label`,
			}},
		{name: "a variable name with a space, and one twice", gate: with(func(g *v1alpha1.EnvKeptGate) { g.Names = []string{"CLUSTER ID", "LOG_LEVEL", "LOG_LEVEL", "1X"} }),
			want: []string{
				`g.envKept.names[0]: Invalid value: "CLUSTER ID": not an environment variable name: a valid environment variable name must consist of`,
				`g.envKept.names[2]: Duplicate value: "LOG_LEVEL": list each variable once`,
				`g.envKept.names[3]: Invalid value: "1X": not an environment variable name:`,
			}},
		{name: "with another kind", gate: v1alpha1.Gate{EnvKept: &ok, NodesReady: &v1alpha1.NodesReadyGate{}},
			want: []string{`g: Invalid value: "2 gate kinds": set exactly one gate kind: ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept, soak or metric`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateGate(field.NewPath("g"), tc.gate)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n  %v", len(errs), len(tc.want), errs)
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tc.want[i]) {
					t.Errorf("problem %d:\n  %s\nwant it to start with\n  %s", i, e.Error(), tc.want[i])
				}
			}
		})
	}
}

// A gate on a workload its stage does not change is refused when the
// plan alone tells: its steps are image steps on other workloads,
// approvals and pauses. With a manifests or helm step, preflight decides.
func TestEnvKeptGateBelongsToTheStageThatChangesTheWorkload(t *testing.T) {
	gate := v1alpha1.Gate{EnvKept: &v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: "liqo", Name: "liqo-controller-manager", Container: "controller-manager"}}
	image := func(kind, ns, name string) v1alpha1.Step {
		return v1alpha1.Step{Name: "img-" + name, Image: &v1alpha1.ImageStep{Kind: kind, Namespace: ns, Name: name, Images: map[string]string{"c": "x:1"}}}
	}
	approval := v1alpha1.Step{Name: "approve", Approval: &v1alpha1.ApprovalStep{}}
	manifests := v1alpha1.Step{Name: "apply", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Path: "manager.yaml"}}}
	const refused = `spec.stages[0].gates[1].envKept: Invalid value: "deployment liqo/liqo-controller-manager": no step of stage "fabric" changes it, so the stage's backup does not hold it: put the envKept gate in the stage that changes the workload: only that stage's backup holds it as it was`
	for _, tc := range []struct {
		name  string
		steps []v1alpha1.Step
		want  string
	}{
		{name: "its image step", steps: []v1alpha1.Step{approval, image("Deployment", "liqo", "liqo-controller-manager")}},
		{name: "image steps on other workloads", steps: []v1alpha1.Step{image("DaemonSet", "liqo", "liqo-controller-manager"), image("Deployment", "liqo", "liqo-ipam"), approval}, want: refused},
		{name: "an approval alone", steps: []v1alpha1.Step{approval}, want: refused},
		{name: "a manifests step: preflight decides", steps: []v1alpha1.Step{image("Deployment", "liqo", "liqo-ipam"), manifests}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := v1alpha1.Stage{Name: "fabric", Steps: tc.steps, Gates: []v1alpha1.Gate{{NodesReady: &v1alpha1.NodesReadyGate{}}, gate}}
			errs := validateEnvKeptStage(field.NewPath("spec").Child("stages").Index(0), st)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.want != "" && (len(errs) != 1 || errs[0].Error() != tc.want):
				t.Errorf("got %v\nwant %s", errs, tc.want)
			}
		})
	}
}
