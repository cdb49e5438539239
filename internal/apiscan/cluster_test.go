package apiscan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestScanFindsWhatAnOlderClusterLeft: the 1.34 cluster serves no
// removed version, so what an older one left is planted as it was left:
// an HPA whose last-applied annotation says autoscaling/v2beta2 (what
// `kubectl apply` of a v2beta2 manifest wrote on 1.25), a Deployment
// applied as extensions/v1beta1 (listed through apps/v1), and a Helm
// release whose deployed manifest holds a policy/v1beta1
// PodDisruptionBudget. A clean cluster first gives nothing; then each is
// found once, with where it was seen and the fix; an object applied in a
// served version, a superseded revision and a scan for a minor before
// the removal find nothing more.
func TestScanFindsWhatAnOlderClusterLeft(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := clients.New(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Scan(ctx, cs, 34)
	if err != nil || rep.Blocks() {
		t.Fatalf("Scan of a clean cluster = %v, %v; want nothing", rep.Lines(), err)
	}

	ns := testenv.Namespace(t, ctx, cs.Clientset, "scan")
	plantHPA(t, ctx, cs, ns, "front", "autoscaling/v2beta2")
	plantHPA(t, ctx, cs, ns, "current", "autoscaling/v2")
	plantDeployment(t, ctx, cs, ns, "old-web", "extensions/v1beta1")
	plantDeployment(t, ctx, cs, ns, "web", "apps/v1")
	plantRelease(t, cs, ns, "legacy", 1, release.StatusDeployed, pdbManifest("policy/v1beta1"))
	plantRelease(t, cs, ns, "moved", 1, release.StatusSuperseded, pdbManifest("policy/v1beta1"))
	plantRelease(t, cs, ns, "moved", 2, release.StatusDeployed, pdbManifest("policy/v1"))

	rep, err = Scan(ctx, cs, 34)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 {
		t.Fatalf("problems as an admin: %v", rep.Problems)
	}
	want := []string{
		"HorizontalPodAutoscaler " + ns + "/front was last applied as autoscaling/v2beta2 (its annotation kubectl.kubernetes.io/last-applied-configuration): autoscaling/v2beta2 HorizontalPodAutoscaler was removed in Kubernetes 1.26: use autoscaling/v2. Fix: write apiVersion autoscaling/v2 in the manifest it is applied from and apply it again",
		"Deployment " + ns + "/old-web was last applied as extensions/v1beta1 (its annotation kubectl.kubernetes.io/last-applied-configuration): extensions/v1beta1 Deployment was removed in Kubernetes 1.16: use apps/v1",
		"PodDisruptionBudget " + ns + "/legacy is policy/v1beta1 in the manifest of Helm release legacy in namespace " + ns + " (revision 1), which Helm reads back on the release's next upgrade or rollback: policy/v1beta1 PodDisruptionBudget was removed in Kubernetes 1.25: use policy/v1 (an empty spec.selector selects every pod of the namespace). Fix: upgrade the release with a chart that writes policy/v1, or rewrite the release's record with `helm mapkubeapis legacy --namespace " + ns + "`",
	}
	lines := rep.Lines()
	if len(lines) != len(want) {
		t.Errorf("Scan found %d: %s\nwant %d", len(lines), strings.Join(lines, "\n"), len(want))
	}
	for _, w := range want {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, w) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("found %d times, want once: %q\nin:\n%s", n, w, strings.Join(lines, "\n"))
		}
	}

	// Kubernetes 1.24 still served all but the 1.16 removal.
	rep, err = Scan(ctx, cs, 24)
	if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Name != "old-web" {
		t.Errorf("Scan for 1.24 = %v, %v; want the extensions/v1beta1 Deployment alone", rep.Lines(), err)
	}
}

// TestAKindThatCannotBeListedBlocks: a user who may list nothing gets no
// finding but a problem per kind and for Helm releases, each naming the
// access it needs: the scan blocks, it does not pass.
func TestAKindThatCannotBeListedBlocks(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc, err := c.UserKubeconfig("scan-nobody")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := clients.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Scan(ctx, cs, 34)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Blocks() || len(rep.Findings) != 0 {
		t.Fatalf("Scan as a user without access: blocks %t, findings %v", rep.Blocks(), rep.Findings)
	}
	text := strings.Join(rep.Lines(), "\n")
	for _, w := range []string{
		"cannot check horizontalpodautoscalers.autoscaling (autoscaling/v2) for removed API versions: list horizontalpodautoscalers.autoscaling: horizontalpodautoscalers.autoscaling is forbidden: User \"scan-nobody\" cannot list resource",
		"Fix: grant list on horizontalpodautoscalers.autoscaling in every namespace (a ClusterRole bound by a ClusterRoleBinding)",
		"Fix: grant list on clusterroles.rbac.authorization.k8s.io (a ClusterRole",
		"cannot check Helm releases for removed API versions: helm list --all-namespaces --deployed:",
		"Fix: grant list on secrets in every namespace (Helm keeps its releases in Secrets",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("problems do not say %q:\n%s", w, text)
		}
	}
}

// plantHPA creates an HPA through autoscaling/v2 whose last-applied
// annotation says it was applied as apiVersion.
func plantHPA(t *testing.T, ctx context.Context, cs *clients.Set, ns, name, apiVersion string) {
	t.Helper()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    3,
		},
	}
	hpa.Annotations = map[string]string{LastAppliedAnnotation: lastApplied(t, apiVersion, "HorizontalPodAutoscaler", ns, name,
		map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3})}
	if _, err := cs.Clientset.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// plantDeployment creates a Deployment whose last-applied annotation says
// it was applied as apiVersion.
func plantDeployment(t *testing.T, ctx context.Context, cs *clients.Set, ns, name, apiVersion string) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
			LastAppliedAnnotation: lastApplied(t, apiVersion, "Deployment", ns, name, map[string]any{"replicas": 0})}},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.com/web:1"}}},
			},
		},
	}
	if _, err := cs.Clientset.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// lastApplied is the annotation kubectl apply writes.
func lastApplied(t *testing.T, apiVersion, kind, ns, name string, spec map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns, "annotations": map[string]any{}}, "spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func pdbManifest(apiVersion string) string {
	return `---
# Source: legacy/templates/pdb.yaml
apiVersion: ` + apiVersion + `
kind: PodDisruptionBudget
metadata:
  name: legacy
spec:
  minAvailable: 1
  selector: {matchLabels: {app: legacy}}
`
}

// plantRelease writes a Helm release record as helm does (a Secret of
// the storage driver in the release's namespace), without a chart run:
// the cluster could not apply the manifest's removed version.
func plantRelease(t *testing.T, cs *clients.Set, ns, name string, revision int, status release.Status, manifest string) {
	t.Helper()
	rel := &release.Release{
		Name: name, Namespace: ns, Version: revision, Manifest: manifest,
		Info:  &release.Info{Status: status},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "legacy", Version: "0.1.0", APIVersion: chart.APIVersionV2}},
	}
	d := driver.NewSecrets(cs.Clientset.CoreV1().Secrets(ns))
	if err := d.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, revision), rel); err != nil {
		t.Fatal(err)
	}
}
