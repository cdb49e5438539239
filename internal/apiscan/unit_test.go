package apiscan

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/internal/apiremovals"
	"github.com/upshift-dev/upshift/internal/helmx"
)

func removal(apiVersion, kind string) apiremovals.Removal {
	rs := apiremovals.Removed([]schema.GroupVersionKind{schema.FromAPIVersionAndKind(apiVersion, kind)}, 0, 40)
	if len(rs) != 1 {
		panic(apiVersion + " " + kind + " is not in the removal table")
	}
	return rs[0]
}

// TestTargetsAreTheServedHomesOfRemovedKinds: a removed kind is listed
// through its own group or its replacement's (Deployments of
// extensions/v1beta1 through apps), when listable; subresources,
// create-only reviews and other kinds are not.
func TestTargetsAreTheServedHomesOfRemovedKinds(t *testing.T) {
	list := []string{"list", "get", "watch"}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: list},
			{Name: "deployments/status", Kind: "Deployment", Namespaced: true, Verbs: list},
			{Name: "controllerrevisions", Kind: "ControllerRevision", Namespaced: true, Verbs: list},
		}},
		{GroupVersion: "autoscaling/v2", APIResources: []metav1.APIResource{
			{Name: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true, Verbs: list},
		}},
		{GroupVersion: "authorization.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "subjectaccessreviews", Kind: "SubjectAccessReview", Verbs: []string{"create"}},
		}},
		{GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "clusterroles", Kind: "ClusterRole", Verbs: list},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: list}, // another group's kind of the same name
		}},
	}
	removals := []apiremovals.Removal{removal("extensions/v1beta1", "Deployment"), removal("autoscaling/v2beta2", "HorizontalPodAutoscaler"),
		removal("authorization.k8s.io/v1beta1", "SubjectAccessReview"), removal("rbac.authorization.k8s.io/v1beta1", "ClusterRole")}
	var got []string
	for _, tg := range targets(lists, removals) {
		got = append(got, tg.What())
	}
	want := []string{"deployments.apps (apps/v1)", "horizontalpodautoscalers.autoscaling (autoscaling/v2)", "clusterroles.rbac.authorization.k8s.io (rbac.authorization.k8s.io/v1)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("targets = %v, want %v", got, want)
	}
	if g := neededGroups(removals); !g["extensions"] || !g["apps"] || g["example.com"] {
		t.Errorf("neededGroups = %v, want extensions and apps, not example.com", g)
	}
}

func TestLastAppliedKind(t *testing.T) {
	for _, tt := range []struct {
		name string
		ann  map[string]string
		want string // "" for none
	}{
		{"kubectl's record", map[string]string{LastAppliedAnnotation: `{"apiVersion":"autoscaling/v2beta2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"}}`}, "autoscaling/v2beta2, Kind=HorizontalPodAutoscaler"},
		{"none", map[string]string{"other": "x"}, ""},
		{"not JSON", map[string]string{LastAppliedAnnotation: "apiVersion: v1"}, ""},
		{"no kind", map[string]string{LastAppliedAnnotation: `{"apiVersion":"v1"}`}, ""},
	} {
		gvk, ok := lastAppliedKind(tt.ann)
		if got := map[bool]string{true: gvk.String()}[ok]; got != tt.want {
			t.Errorf("%s: lastAppliedKind = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestScanManifest: every document of a deployed manifest in a removed
// version, namespaced by the release when the template left it out; a
// served version, a comment and a version removed after the target are
// not reported; a document that does not parse is a problem.
func TestScanManifest(t *testing.T) {
	m := helmx.Manifest{Name: "legacy", Namespace: "apps", Revision: 3, Manifest: `---
# Source: legacy/templates/pdb.yaml
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: legacy
spec: {minAvailable: 1}
---
# Source: legacy/templates/psp.yaml
apiVersion: policy/v1beta1
kind: PodSecurityPolicy
metadata:
  name: legacy
---
# Source: legacy/templates/hpa.yaml
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata: {name: legacy, namespace: elsewhere}
---
# Source: legacy/templates/flow.yaml
apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: FlowSchema
metadata: {name: legacy}
---
# Source: legacy/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: legacy}
---
# Source: legacy/templates/empty.yaml
# nothing rendered
`}
	found, problems := scanManifest(m, 26, map[string]bool{"PodDisruptionBudget": true, "HorizontalPodAutoscaler": true})
	var got []string
	for _, f := range found {
		got = append(got, f.Object()+" "+f.Removal.Kind.GroupVersion().String())
	}
	want := []string{"PodDisruptionBudget apps/legacy policy/v1beta1", "PodSecurityPolicy legacy policy/v1beta1", "HorizontalPodAutoscaler elsewhere/legacy autoscaling/v2beta2"}
	if !reflect.DeepEqual(got, want) || len(problems) != 0 {
		t.Fatalf("scanManifest = %v, %v; want %v and no problem", got, problems, want)
	}
	if found[0].Helm == nil || *found[0].Helm != (HelmRelease{Name: "legacy", Namespace: "apps", Revision: 3}) {
		t.Errorf("finding's release = %+v", found[0].Helm)
	}
	m.Manifest = "---\napiVersion: v1\nkind: [ConfigMap\n"
	if _, problems := scanManifest(m, 26, nil); len(problems) != 1 || !strings.Contains(problems[0].String(), "cannot check Helm release legacy in namespace apps (revision 3)") {
		t.Errorf("a manifest that does not parse: problems = %v, want one naming the release", problems)
	}
}

func TestMessagesNameTheObjectWhereItWasSeenAndTheFix(t *testing.T) {
	for _, tt := range []struct {
		f    Finding
		want string
	}{
		{Finding{Kind: "HorizontalPodAutoscaler", Namespace: "web", Name: "front", Removal: removal("autoscaling/v2beta2", "HorizontalPodAutoscaler")},
			"HorizontalPodAutoscaler web/front was last applied as autoscaling/v2beta2 (its annotation kubectl.kubernetes.io/last-applied-configuration): " +
				"autoscaling/v2beta2 HorizontalPodAutoscaler was removed in Kubernetes 1.26: use autoscaling/v2. " +
				"Fix: write apiVersion autoscaling/v2 in the manifest it is applied from and apply it again (kubectl apply rewrites the annotation)"},
		{Finding{Kind: "PodSecurityPolicy", Name: "restricted", Removal: removal("policy/v1beta1", "PodSecurityPolicy")},
			"Fix: take it out of the manifests it is applied from and delete it"},
		{Finding{Kind: "PodDisruptionBudget", Namespace: "apps", Name: "legacy", Helm: &HelmRelease{Name: "legacy", Namespace: "apps", Revision: 1}, Removal: removal("policy/v1beta1", "PodDisruptionBudget")},
			"PodDisruptionBudget apps/legacy is policy/v1beta1 in the manifest of Helm release legacy in namespace apps (revision 1), which Helm reads back on the release's next upgrade or rollback: " +
				"policy/v1beta1 PodDisruptionBudget was removed in Kubernetes 1.25: use policy/v1 (an empty spec.selector selects every pod of the namespace). " +
				"Fix: upgrade the release with a chart that writes policy/v1, or rewrite the release's record with `helm mapkubeapis legacy --namespace apps` (the helm-mapkubeapis plugin)"},
	} {
		if got := tt.f.String(); !strings.Contains(got, tt.want) {
			t.Errorf("String() = %q\nwant it to contain %q", got, tt.want)
		}
	}
	p := Problem{What: "horizontalpodautoscalers.autoscaling (autoscaling/v2)", Err: errors.New("forbidden"),
		Fix: listFix(target{GVR: schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, Namespaced: true})}
	want := "cannot check horizontalpodautoscalers.autoscaling (autoscaling/v2) for removed API versions: forbidden. Fix: grant list on horizontalpodautoscalers.autoscaling in every namespace"
	if !strings.HasPrefix(p.String(), want) {
		t.Errorf("Problem = %q\nwant it to start %q", p.String(), want)
	}
	r := &Report{Findings: []Finding{{Kind: "X"}}, Problems: []Problem{p}}
	if !r.Blocks() || len(r.Lines()) != 2 || (&Report{}).Blocks() {
		t.Error("a report with a finding or a problem blocks, an empty one does not")
	}
}
