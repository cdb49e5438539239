package plan

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func rule(groups, resources, ops string) v1alpha1.FreezeRule {
	split := func(s string) []string {
		if s == "-" {
			return nil
		}
		return strings.Split(s, ",")
	}
	return v1alpha1.FreezeRule{APIGroups: split(groups), Resources: split(resources), Operations: split(ops)}
}

// What a freeze step may say: each problem with its field path and the fix.
func TestFreezeRules(t *testing.T) {
	peerings := rule("liqo.io", "foreignclusters,namespaceoffloadings", "CREATE")
	for _, tc := range []struct {
		name   string
		freeze v1alpha1.FreezeStep
		want   []string // exact problems (prefixes), in order
	}{
		{name: "liqo peerings", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{peerings}}},
		{name: "core group, namespaces, message", freeze: v1alpha1.FreezeStep{
			Rules: []v1alpha1.FreezeRule{rule("", "configmaps", "CREATE,UPDATE,DELETE")}, Namespaces: []string{"liqo", "tenant-a"}, Message: "peerings are frozen during the upgrade"}},
		{name: "wildcards and subresources", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{
			rule("*", "*", "DELETE"), rule("", "pods/exec,pods/*", "CONNECT"), rule("apps", "*/scale", "UPDATE"), rule("", "*/*", "CREATE")}}},
		{name: "no rules", freeze: v1alpha1.FreezeStep{},
			want: []string{"f.rules: Required value: at least one rule, e.g. {apiGroups: [liqo.io], resources: [foreignclusters], operations: [CREATE]}"}},
		{name: "empty rule", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{rule("-", "-", "-")}},
			want: []string{
				`f.rules[0].apiGroups: Required value: the resources' API groups: "" for the core group (configmaps, secrets), e.g. liqo.io, or "*"`,
				"f.rules[0].resources: Required value: plural resource names, e.g. configmaps or foreignclusters",
				"f.rules[0].operations: Required value: the operations to deny: CREATE, UPDATE, DELETE, CONNECT",
			}},
		{name: "lower-case operation", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{rule("liqo.io", "foreignclusters", "create,PATCH")}},
			want: []string{
				`f.rules[0].operations[0]: Unsupported value: "create": supported values: "CREATE", "UPDATE", "DELETE", "CONNECT"`,
				`f.rules[0].operations[1]: Unsupported value: "PATCH": supported values: "CREATE", "UPDATE", "DELETE", "CONNECT"`,
			}},
		{name: "a kind instead of a resource", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{rule("", "ConfigMap,configmaps/", "CREATE")}},
			want: []string{
				`f.rules[0].resources[0]: Invalid value: "ConfigMap": a plural resource name in lower case as the API serves it (configmaps, not ConfigMap)`,
				`f.rules[0].resources[1]: Invalid value: "configmaps/": a plural resource name in lower case`,
			}},
		{name: "a version in the group", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{rule("liqo.io/v1beta1", "foreignclusters", "CREATE")}},
			want: []string{`f.rules[0].apiGroups[0]: Invalid value: "liqo.io/v1beta1": an API group such as apps or liqo.io ("" for the core group), without a version`}},
		{name: "wildcards with others", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{rule("*,apps", "*,deployments", "UPDATE")}},
			want: []string{
				`f.rules[0].apiGroups[0]: Invalid value: "*": "*" already means every group: list it alone`,
				`f.rules[0].resources[0]: Invalid value: "*": * already means every resource of the groups: list it alone`,
			}},
		{name: "admission configuration", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{rule("admissionregistration.k8s.io", "validatingadmissionpolicies", "DELETE")}},
			want: []string{`f.rules[0].apiGroups[0]: Invalid value: "admissionregistration.k8s.io": the API server never applies admission policies to admission configuration`}},
		{name: "bad namespace", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{peerings}, Namespaces: []string{"Liqo"}},
			want: []string{`f.namespaces[0]: Invalid value: "Liqo": a namespace name: `}},
		{name: "multi-line message", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{peerings}, Message: "frozen\nuntil later"},
			want: []string{`f.message: Invalid value: "(multi-line)": write the message on one line: the API server refuses line breaks in it`}},
		{name: "blank message", freeze: v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{peerings}, Message: "  "},
			want: []string{`f.message: Invalid value: "  ": write a message, or leave it out for the default one`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateFreeze(field.NewPath("f"), &tc.freeze)
			if len(errs) != len(tc.want) {
				t.Fatalf("%d problems, want %d:\n%s", len(errs), len(tc.want), errs.ToAggregate())
			}
			for i, want := range tc.want {
				if got := errs[i].Error(); !strings.HasPrefix(got, want) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, got, want)
				}
			}
		})
	}
}

// The API server's matching of a rule, as FreezeDenies reproduces it.
func TestFreezeDenies(t *testing.T) {
	f := &v1alpha1.FreezeStep{
		Rules:      []v1alpha1.FreezeRule{rule("", "configmaps", "CREATE"), rule("apps", "*", "UPDATE"), rule("*", "pods/*,*/scale", "CONNECT,UPDATE")},
		Namespaces: []string{"liqo"},
	}
	for _, tc := range []struct {
		w    Write
		want int
	}{
		{Write{Resource: "configmaps", Namespace: "liqo", Operation: "CREATE"}, 0},
		{Write{Resource: "configmaps", Namespace: "liqo", Operation: "UPDATE"}, -1},
		{Write{Resource: "configmaps", Namespace: "shop", Operation: "CREATE"}, -1},                        // another namespace
		{Write{Group: "apps", Resource: "deployments", Namespace: "liqo", Operation: "UPDATE"}, 1},         // "*": every resource
		{Write{Group: "apps", Resource: "deployments/status", Namespace: "liqo", Operation: "UPDATE"}, -1}, // … but no subresource
		{Write{Group: "apps", Resource: "deployments/scale", Namespace: "liqo", Operation: "UPDATE"}, 2},
		{Write{Resource: "pods/exec", Namespace: "liqo", Operation: "CONNECT"}, 2},
		{Write{Resource: "pods", Namespace: "liqo", Operation: "CONNECT"}, -1},
		{Write{Group: "batch", Resource: "jobs", Namespace: "liqo", Operation: "UPDATE"}, -1},
		{Write{Group: "apps", Resource: "deployments", Operation: "UPDATE"}, 1}, // cluster-scoped: every namespace selector keeps it
	} {
		if got := FreezeDenies(f, tc.w); got != tc.want {
			t.Errorf("FreezeDenies(%s) = %d, want %d", tc.w, got, tc.want)
		}
	}
	all := &v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{rule("*", "*/*", "DELETE")}}
	if got := FreezeDenies(all, Write{Group: "liqo.io", Resource: "foreignclusters/status", Namespace: "x", Operation: "DELETE"}); got != 0 {
		t.Errorf("*/* in every group: %d, want 0", got)
	}
}

// A freeze that denies what a step of its stage, or of a later one,
// writes is refused, naming that step; earlier stages are left alone.
func TestFreezeReach(t *testing.T) {
	freezeStep := func(name string, f v1alpha1.FreezeStep) v1alpha1.Step {
		return v1alpha1.Step{Name: name, Freeze: &f}
	}
	image := v1alpha1.Step{Name: "web", Image: &v1alpha1.ImageStep{Kind: "Deployment", Namespace: "shop", Name: "web", Images: map[string]string{"app": "web:2"}}}
	helm := v1alpha1.Step{Name: "addon", Helm: &v1alpha1.HelmStep{Release: "addon", Namespace: "addons", Chart: "c", CreateNamespace: true}}
	crds := v1alpha1.Step{Name: "crds", CRDs: &v1alpha1.CRDsStep{}}
	freezeApps := freezeStep("freeze", v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{rule("apps", "deployments", "UPDATE")}})
	for _, tc := range []struct {
		name   string
		stages []v1alpha1.Stage
		want   []string
	}{
		{name: "writer in an earlier stage", stages: []v1alpha1.Stage{
			{Name: "workloads", Steps: []v1alpha1.Step{image}},
			{Name: "hold", Steps: []v1alpha1.Step{freezeApps}},
		}},
		{name: "writer in a later stage", stages: []v1alpha1.Stage{
			{Name: "hold", Steps: []v1alpha1.Step{freezeApps}},
			{Name: "workloads", Steps: []v1alpha1.Step{image}},
		}, want: []string{
			"spec.stages[0].steps[0].freeze.rules[0]: Forbidden: denies UPDATE of deployments.apps in namespace shop, which step web (stage workloads) does: the run would deny itself that step, or its rollback; narrow the rule or set namespaces so it leaves that out, or freeze in a stage after that step's",
		}},
		{name: "writer earlier in the same stage (its restore runs under the freeze)", stages: []v1alpha1.Stage{
			{Name: "all", Steps: []v1alpha1.Step{image, freezeApps}},
		}, want: []string{"spec.stages[0].steps[1].freeze.rules[0]: Forbidden: denies UPDATE of deployments.apps in namespace shop, which step web (stage all) does"}},
		{name: "namespaces leave the writer out", stages: []v1alpha1.Stage{
			{Name: "hold", Steps: []v1alpha1.Step{freezeStep("freeze", v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{rule("apps", "deployments", "UPDATE")}, Namespaces: []string{"liqo"}})}},
			{Name: "workloads", Steps: []v1alpha1.Step{image}},
		}},
		{name: "helm's records and namespace, CRDs", stages: []v1alpha1.Stage{
			{Name: "hold", Steps: []v1alpha1.Step{freezeStep("freeze", v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{
				rule("", "secrets", "DELETE"), rule("", "namespaces", "CREATE"), rule("apiextensions.k8s.io", "customresourcedefinitions", "UPDATE")}})}},
			{Name: "rest", Steps: []v1alpha1.Step{helm, crds}},
		}, want: []string{
			"spec.stages[0].steps[0].freeze.rules[0]: Forbidden: denies DELETE of secrets in namespace addons, which step addon (stage rest) does",
			"spec.stages[0].steps[0].freeze.rules[1]: Forbidden: denies CREATE of namespaces in namespace addons, which step addon (stage rest) does",
			"spec.stages[0].steps[0].freeze.rules[2]: Forbidden: denies UPDATE of customresourcedefinitions.apiextensions.k8s.io, which step crds (stage rest) does",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateFreezeReach(field.NewPath("spec"), v1alpha1.UpgradePlanSpec{Stages: tc.stages})
			if len(errs) != len(tc.want) {
				t.Fatalf("%d problems, want %d:\n%s", len(errs), len(tc.want), errs.ToAggregate())
			}
			for i, want := range tc.want {
				if got := errs[i].Error(); !strings.HasPrefix(got, want) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, got, want)
				}
			}
		})
	}
}
