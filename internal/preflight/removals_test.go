package preflight

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/preflight/crdfixture"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// crdFixture is crdfixture's CRD, and a session to preflight plans with.
type crdFixture struct {
	*crdfixture.Fixture
	s *session
}

func newCRDFixture(t *testing.T, group string, objects int) *crdFixture {
	s, err := open(testenv.Cluster(t).RESTConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &crdFixture{Fixture: crdfixture.New(t, group, objects), s: s}
}

var gadgetCRD = crdfixture.CRD

func fromSources(t *testing.T, p *v1alpha1.UpgradePlan, sources map[string][]byte) *resolve.Plan {
	t.Helper()
	r, err := resolve.FromSources(p, sources)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPreflightRefusesACRDThatDropsAStoredVersion: a crds step (and a
// Helm chart that renders the CRD) dropping v1alpha1, which the live
// CRD's status.storedVersions still lists, is refused before anything is
// written, naming the CRD, the version, how many objects a migration
// rewrites and the fix. Once the objects are migrated and storedVersions
// is [v1], the same plans pass.
func TestPreflightRefusesACRDThatDropsAStoredVersion(t *testing.T) {
	group := "dropped.removals.upshift.test"
	f := newCRDFixture(t, group, 3)
	drop := gadgetCRD(group, "v1*")
	crdStep := crdfixture.Plan(t, drop)
	helmStep := helmPlan(t, "crd.yaml", drop)

	for _, tt := range []struct {
		name, path string
		plan       *resolve.Plan
	}{
		{"crds step", "spec.stages[0].steps[0].crds", crdStep},
		{"helm chart", "spec.stages[0].steps[0].helm.chart", helmStep},
	} {
		errs := f.s.Preflight(f.Ctx, tt.plan)
		e := crdfixture.ProblemAt(errs, tt.path, "gadgets."+group, "lists v1alpha1", "3 gadgets."+group+" exist",
			"migrate the stored objects to v1", "remove v1alpha1 from the CRD's status.storedVersions", "served: false")
		if e == nil {
			t.Fatalf("%s: want a problem at %s naming the CRD, v1alpha1, the 3 objects and the fix; got %v", tt.name, tt.path, errs)
		}
		t.Logf("%s: %s", tt.name, e)
	}
	// The premise: the API server refuses the update (a dry run here).
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(drop), &u.Object); err != nil {
		t.Fatal(err)
	}
	_, err := f.Dyn.Resource(kube.CRDResource).Apply(f.Ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "test", Force: true, DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "missing from spec.versions") {
		t.Errorf("a dry-run update dropping v1alpha1: want the API server's refusal quoting \"missing from spec.versions\", got %v", err)
	}
	if got := len(versionsOf(f.Live())); got != 2 {
		t.Fatalf("preflight changed the CRD: %d versions, want the 2 it had", got)
	}

	f.Migrate()
	for name, p := range map[string]*resolve.Plan{"crds step": crdStep, "helm chart": helmStep} {
		if errs := f.s.Preflight(f.Ctx, p); len(errs) > 0 {
			t.Errorf("%s after the migration: want no problem, got %v", name, errs)
		}
	}
}

func versionsOf(crd *unstructured.Unstructured) []any {
	vs, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	return vs
}

// TestPreflightAcceptsAMovedStorageVersion: a CRD that makes v1 the
// storage version and keeps v1alpha1 (served or not) drops nothing stored.
func TestPreflightAcceptsAMovedStorageVersion(t *testing.T) {
	group := "moved.removals.upshift.test"
	f := newCRDFixture(t, group, 1)
	for _, doc := range []string{
		gadgetCRD(group, "v1alpha1", "v1*"),
		strings.Replace(gadgetCRD(group, "v1alpha1", "v1*"), "served: true", "served: false", 1),
	} {
		p := crdfixture.Plan(t, doc)
		if errs := f.s.Preflight(f.Ctx, p); len(errs) > 0 {
			t.Errorf("want no problem, got %v\nfor\n%s", errs, doc)
		}
	}
}

// helmPlan is a resolved plan of one helm step whose chart has one
// template.
func helmPlan(t *testing.T, name, template string) *resolve.Plan {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, body := range map[string]string{
		"Chart.yaml":                     "apiVersion: v2\nname: addon\nversion: 1.0.0\n",
		filepath.Join("templates", name): template,
	} {
		if err := os.WriteFile(filepath.Join(dir, path), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tgz, err := helmx.FetchChart(context.Background(), helmx.ChartRef{Chart: dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "2.0.0", Stages: []v1alpha1.Stage{{
		Name:  "addon",
		Steps: []v1alpha1.Step{{Name: "addon", Helm: &v1alpha1.HelmStep{Release: "addon", Namespace: "default", Chart: dir}}},
	}}}}
	return fromSources(t, p, map[string][]byte{resolve.HelmChartPath(0, 0): tgz})
}

// TestPreflightNamesTheReplacementOfARemovedAPI: an object of an
// apiVersion the cluster's Kubernetes removed is refused with its
// replacement, in place of "the cluster does not serve this kind" (which
// a kind unknown to the table still gets), in manifests and in a chart.
func TestPreflightNamesTheReplacementOfARemovedAPI(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := open(c.RESTConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hpa := "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: default}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, maxReplicas: 3}\n"
	docs := hpa + "---\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: nightly, namespace: default}\n" +
		"---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n"
	manifests := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "2.0.0", Stages: []v1alpha1.Stage{{
		Name:  "apps",
		Steps: []v1alpha1.Step{{Name: "apps", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: docs}}}},
	}}}}
	info, err := kubernetes.NewForConfigOrDie(c.RESTConfig()).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	minor := "1." + strings.TrimSuffix(info.Minor, "+")

	errs := s.Preflight(ctx, fromSources(t, manifests, map[string][]byte{"spec.stages[0].steps[0].manifests": []byte(docs)}))
	path := "spec.stages[0].steps[0].manifests"
	for _, want := range [][]string{
		{"HorizontalPodAutoscaler autoscaling/v2beta2", "the cluster runs Kubernetes " + minor, "autoscaling/v2beta2 HorizontalPodAutoscaler was removed in Kubernetes 1.26: use autoscaling/v2"},
		{"CronJob batch/v1beta1", "batch/v1beta1 CronJob was removed in Kubernetes 1.25: use batch/v1"},
		{"Widget example.com/v1", "the cluster does not serve this kind and no CRD in the plan defines it"},
	} {
		if crdfixture.ProblemAt(errs, path, want...) == nil {
			t.Errorf("want a problem at %s saying %q; got %v", path, want, errs)
		}
	}
	for _, e := range errs {
		t.Log(e)
		if strings.Contains(e.Error(), "HorizontalPodAutoscaler") && strings.Contains(e.Error(), "does not serve this kind and no CRD") {
			t.Errorf("the removed kind also got the generic message: %s", e)
		}
	}

	errs = s.Preflight(ctx, helmPlan(t, "hpa.yaml", hpa))
	t.Log(errs)
	if crdfixture.ProblemAt(errs, "spec.stages[0].steps[0].helm.chart", "does not render", "removed in Kubernetes 1.26: use autoscaling/v2") == nil {
		t.Errorf("a chart rendering autoscaling/v2beta2: want the replacement named at spec.stages[0].steps[0].helm.chart; got %v", errs)
	}
}
