package catalog

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/resolve"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestDetectReadsEverySourceKind reads a version from a ConfigMap key, a
// container's image tag, a Helm release's chart and app versions and a
// label, on a real cluster; a missing key, a missing release and a
// half-upgraded platform are reported, not guessed.
func TestDetectReadsEverySourceKind(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := clients.New(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, ctx, cs.Clientset, "detect")
	if _, err := cs.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "platform-version", Labels: map[string]string{"app.kubernetes.io/version": "1.0.0"}},
		Data:       map[string]string{"version": "v1.0.0"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "ctl"}
	if _, err := cs.Clientset.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "controller"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "manager", Image: "ghcr.io/example/manager:v1.0.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
					{Name: "proxy", Image: "ghcr.io/example/proxy:v0.9.0"},
				}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ch, err := helmx.Load("../helmx/testdata/chart") // chart 0.1.0, app 1.0.0
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Helm.InstallOrUpgrade(ctx, "addon", ns, ch, nil, helmx.UpgradeOptions{}); err != nil {
		t.Fatal(err)
	}

	agreeing := []VersionSource{
		{ConfigMap: &ConfigMapVersion{Namespace: ns, Name: "platform-version", Key: "version"}},
		{Image: &ImageVersion{Kind: "Deployment", Namespace: ns, Name: "controller", Container: "manager"}},
		{Helm: &HelmVersion{Namespace: ns, Release: "addon", Field: HelmAppVersion}},
		{Label: &LabelVersion{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "platform-version", Key: "app.kubernetes.io/version"}},
		{ConfigMap: &ConfigMapVersion{Namespace: ns, Name: "absent", Key: "version"}, Optional: true},
	}
	findings := Detect(ctx, cs, agreeing)
	v, err := Agree(findings)
	if err != nil || !v.Equal(semver.MustParse("1.0.0")) {
		t.Fatalf("Agree = %v, %v; want 1.0.0 from every source:\n%v", v, err, findings)
	}

	disagreeing := []VersionSource{
		{ConfigMap: &ConfigMapVersion{Namespace: ns, Name: "platform-version", Key: "version"}},
		{Image: &ImageVersion{Kind: "Deployment", Namespace: ns, Name: "controller", Container: "proxy"}},
		{Helm: &HelmVersion{Namespace: ns, Release: "addon"}},
		{Helm: &HelmVersion{Namespace: ns, Release: "gone"}},
		{ConfigMap: &ConfigMapVersion{Namespace: ns, Name: "platform-version", Key: "release"}},
		{Image: &ImageVersion{Kind: "Deployment", Namespace: ns, Name: "controller"}},
	}
	_, err = Agree(Detect(ctx, cs, disagreeing))
	for _, want := range []string{
		"configMap " + ns + "/platform-version key version: v1.0.0",
		"image of Deployment " + ns + "/controller container proxy: v0.9.0",
		"Helm release " + ns + "/addon chartVersion: 0.1.0",
		"Helm release " + ns + "/gone chartVersion: not found",
		"configMap " + ns + "/platform-version key release: not found",
		"image of Deployment " + ns + "/controller: 2 containers: name the one whose tag is the version (image.container)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Agree = %v\nwant it to report %q", err, want)
		}
	}
}

// TestAConfigMapCatalog is read with its plans from the ConfigMap's keys.
func TestAConfigMapCatalog(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := clients.New(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, ctx, cs.Clientset, "catalog")
	if _, err := cs.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "platform-catalog"},
		Data: map[string]string{
			FileName: `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: in-cluster}
spec:
  planTemplate: plan.tmpl
  releases: [{version: 1.0.0}, {version: 1.1.0}]
`,
			"plan.tmpl": `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: "platform-{{ .Version }}"}
spec:
  version: "{{ .Version }}"
  stages:
  - name: s
    steps:
    - {name: m, manifests: {configMap: {name: "manifests-{{ .Version | replace "." "-" }}"}}}
`,
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	objs, err := resolve.NewObjects(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ParseRef("configmap/platform-catalog", ns)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := Open(ctx, ref, Options{Objects: objs})
	if err != nil {
		t.Fatal(err)
	}
	l, err := cat.PlanFor(ctx, semver.MustParse("1.1.0"), semver.MustParse("1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Plan.Name != "platform-1.1.0" || l.Plan.Spec.Stages[0].Steps[0].Manifests.ConfigMap.Name != "manifests-1-1-0" {
		t.Errorf("plan %s reads configMap %s; want platform-1.1.0 reading manifests-1-1-0", l.Plan.Name, l.Plan.Spec.Stages[0].Steps[0].Manifests.ConfigMap.Name)
	}
	_, err = Open(ctx, Ref{ConfigMap: "missing", Namespace: ns}, Options{Objects: objs})
	if err == nil || !strings.Contains(err.Error(), "configmap "+ns+"/missing") {
		t.Errorf("Open(missing) = %v, want the ConfigMap named", err)
	}
}
