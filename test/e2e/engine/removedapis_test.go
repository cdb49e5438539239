package engine_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// embeddedCatalog is a platform that bundles Kubernetes (an embedded
// cluster): 1.1.0 installs Kubernetes 1.35 on the 1.34 test cluster, 1.2.0
// installs 1.37 (two minors past 1.1.0's).
const embeddedCatalog = `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: embedded}
spec:
  detect:
  - configMap: {namespace: embedded-system, name: embedded-version, key: version}
  planTemplate: plan.yaml.tmpl
  releases:
  - {version: 1.0.0}
  - {version: 1.1.0, installsKubernetes: "1.35"}
  - {version: 1.2.0, installsKubernetes: "1.37.1"}
`

const embeddedTemplate = `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: embedded-{{ .Version }}}
spec:
  version: "{{ .Version }}"
  stages:
  - name: version
    steps:
    - name: version
      manifests:
        inline: |
          apiVersion: v1
          kind: Namespace
          metadata: {name: embedded-system}
          ---
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: embedded-version, namespace: embedded-system}
          data: {version: "{{ .Version }}"}
`

// TestAHopThatBringsAKubernetesMinorIsBlockedByRemovedAPIs: the cluster
// holds what an older Kubernetes left: an HPA last applied as
// autoscaling/v2beta2 and a Helm release whose manifest holds a
// policy/v1beta1 PodDisruptionBudget. The hop to 1.1.0, which installs
// Kubernetes 1.35, is refused by `plan --to` and `upgrade --to` (exit 1)
// naming both objects, where each was seen and the fix, and nothing is
// written. Once the HPA is applied again as autoscaling/v2 and the
// release upgraded, the hop runs, saying the scan found nothing. A path
// that moves Kubernetes two minors in a hop is refused (kubernetes-skip).
func TestAHopThatBringsAKubernetesMinorIsBlockedByRemovedAPIs(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	dir := t.TempDir()
	write(t, filepath.Join(dir, "catalog.yaml"), embeddedCatalog)
	write(t, filepath.Join(dir, "plan.yaml.tmpl"), embeddedTemplate)
	w.mustExit(0, nil, "upgrade", "--to", "1.0.0", "--catalog", dir, "--install")

	r := w.mustExit(1, nil, "plan", "--to", "1.2.0", "--catalog", dir)
	mustContain(t, "plan --to across two Kubernetes minors", r.stderr, "(kubernetes-skip): 1.2.0 installs Kubernetes 1.37.1; the cluster runs 1.35.0 after 1.1.0 installs it")

	// A clean cluster: the scan runs and finds nothing.
	r = w.mustExit(0, nil, "plan", "--to", "1.1.0", "--catalog", dir)
	mustContain(t, "plan --to on a clean cluster", r.stdout, "1.1.0 installs Kubernetes 1.35.0",
		"release 1.1.0 installs Kubernetes 1.35.0 (the cluster runs 1.34.4): no object is in an API version 1.35 no longer serves")

	ns := "legacy"
	if _, err := w.cs.CoreV1().Namespaces().Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.plantHPA(ns, "front", "autoscaling/v2beta2")
	releases := driver.NewSecrets(w.cs.CoreV1().Secrets(ns))
	legacy := helmRecord(ns, "legacy", 1, release.StatusDeployed, "policy/v1beta1")
	if err := releases.Create("sh.helm.release.v1.legacy.v1", legacy); err != nil {
		t.Fatal(err)
	}

	writes := len(w.upshiftWrites())
	hpa := "HorizontalPodAutoscaler legacy/front was last applied as autoscaling/v2beta2 (its annotation kubectl.kubernetes.io/last-applied-configuration): autoscaling/v2beta2 HorizontalPodAutoscaler was removed in Kubernetes 1.26: use autoscaling/v2. Fix: write apiVersion autoscaling/v2 in the manifest it is applied from and apply it again"
	pdb := "PodDisruptionBudget legacy/legacy is policy/v1beta1 in the manifest of Helm release legacy in namespace legacy (revision 1), which Helm reads back on the release's next upgrade or rollback: policy/v1beta1 PodDisruptionBudget was removed in Kubernetes 1.25: use policy/v1"
	fix := "Fix: upgrade the release with a chart that writes policy/v1, or rewrite the release's record with `helm mapkubeapis legacy --namespace legacy`"
	for _, cmd := range []string{"plan", "upgrade"} {
		r := w.mustExit(1, nil, cmd, "--to", "1.1.0", "--catalog", dir)
		mustContain(t, cmd+" --to with removed APIs", r.stderr,
			"release 1.1.0's plan embedded-1.1.0: the release installs Kubernetes 1.35.0 (the cluster runs 1.34.4): the scan for API versions Kubernetes 1.35 no longer serves found 2 problem(s), nothing was changed:",
			"\n  "+hpa, "\n  "+pdb, fix)
	}
	time.Sleep(time.Second) // the audit log is written asynchronously
	for _, e := range w.upshiftWrites()[writes:] {
		t.Errorf("a blocked hop wrote: %s %s", e.Verb, e.Object())
	}
	if v := w.embeddedVersion(); v != "1.0.0" {
		t.Errorf("after the blocked hop the platform says %s, want 1.0.0", v)
	}

	// kubectl apply of the v2 manifest rewrites the annotation; a helm
	// upgrade supersedes the revision with one of policy/v1.
	got, err := w.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(w.ctx, "front", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	got.Annotations[lastAppliedKey] = lastAppliedJSON(t, "autoscaling/v2", ns, "front")
	if _, err := w.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Update(w.ctx, got, metaUpdate); err != nil {
		t.Fatal(err)
	}
	legacy.Info.Status = release.StatusSuperseded
	if err := releases.Update("sh.helm.release.v1.legacy.v1", legacy); err != nil {
		t.Fatal(err)
	}
	if err := releases.Create("sh.helm.release.v1.legacy.v2", helmRecord(ns, "legacy", 2, release.StatusDeployed, "policy/v1")); err != nil {
		t.Fatal(err)
	}
	r = w.mustExit(0, nil, "upgrade", "--to", "1.1.0", "--catalog", dir)
	mustContain(t, "upgrade --to once fixed", r.stdout+r.stderr, "no object is in an API version 1.35 no longer serves", "1.0.0 → 1.1.0")
	if v := w.embeddedVersion(); v != "1.1.0" {
		t.Errorf("after the hop the platform says %s, want 1.1.0", v)
	}
}

const lastAppliedKey = "kubectl.kubernetes.io/last-applied-configuration"

// plantHPA creates an HPA through autoscaling/v2 whose last-applied
// annotation says apiVersion: what `kubectl apply` of a v2beta2 manifest
// left on Kubernetes 1.25, which served both.
func (w *world) plantHPA(ns, name, apiVersion string) {
	w.t.Helper()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{lastAppliedKey: lastAppliedJSON(w.t, apiVersion, ns, name)}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MaxReplicas:    3,
		},
	}
	if _, err := w.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(w.ctx, hpa, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func lastAppliedJSON(t *testing.T, apiVersion, ns, name string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": "HorizontalPodAutoscaler",
		"metadata": map[string]any{"name": name, "namespace": ns, "annotations": map[string]any{}},
		"spec":     map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}, "maxReplicas": 3}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// helmRecord is a Helm release revision whose manifest holds a
// PodDisruptionBudget of apiVersion, as helm stores it.
func helmRecord(ns, name string, revision int, status release.Status, apiVersion string) *release.Release {
	return &release.Release{
		Name: name, Namespace: ns, Version: revision,
		Info:  &release.Info{Status: status},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: name, Version: "0.1.0", APIVersion: chart.APIVersionV2}},
		Manifest: strings.Join([]string{"---", "# Source: " + name + "/templates/pdb.yaml", "apiVersion: " + apiVersion,
			"kind: PodDisruptionBudget", "metadata:", "  name: " + name, "spec:", "  minAvailable: 1", ""}, "\n"),
	}
}

// embeddedVersion is what the platform's ConfigMap says it runs.
func (w *world) embeddedVersion() string {
	w.t.Helper()
	cm, err := w.cs.CoreV1().ConfigMaps("embedded-system").Get(w.ctx, "embedded-version", metaGet)
	if err != nil {
		w.t.Fatal(err)
	}
	return cm.Data["version"]
}
