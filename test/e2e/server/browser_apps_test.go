package server_test

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis/promtest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

// TestBrowserAppRollout: an AppRollout as an operator steers it from the
// web UI, with `upshift controller` rolling it and a real Prometheus
// measuring it. The canary's first step shows in the strip at 20 %, the
// measurements in the chart; Promote takes it to Healthy on v2. v3's
// analysis breaches: the rollout rolls back by itself and the page shows
// why and the failed measurement. Retry starts v3 again, Abort rolls it
// back. A request that does not apply where the rollout stands is refused
// with 409, not recorded.
func TestBrowserAppRollout(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	prom := promtest.Start(t, "0.01")
	e := newEnv(t)
	c := testenv.Cluster(t)
	testenv.InstallCRDs(t, c.RESTConfig())
	ns := testenv.Namespace(t, e.ctx, e.cs, "app-ui")
	testenv.GrantRollouts(t, e.ctx, e.cs, ns, "deployer")
	e.appDeployment(ns, "shop", "registry.example.com/shop:v1", 5)
	e.appController(ns)
	kc := e.typedClient()
	if err := kc.Create(e.ctx, measuredCanary(ns, prom.URL)); err != nil {
		t.Fatal(err)
	}
	s := e.serve()
	u := e.browser(s)
	testID := browsertest.TestID
	row := testID("app-row") + `[data-app="` + ns + `/shop"]`
	phase := func(p string) string {
		return `document.querySelector(` + q(testID("app-phase")) + `)?.dataset.state === ` + q(p)
	}
	current := func(weight string) string {
		return `document.querySelector('[data-testid="app-step"][aria-current="step"]')?.dataset.weight === ` + q(weight)
	}
	chartPoints := `Number(document.querySelector(` + q(testID("metric-chart")) + `)?.dataset.points || 0)`

	u.login(adminPassword)
	u.click(testID("nav-apps"))
	u.until("the rollout listed as Deploying", `document.querySelector(`+q(row)+`)?.dataset.phase === 'Deploying'`)
	u.accessible("apps list")
	u.click(row + " a")
	u.until("the canary at its 20% step, measured three times", current("20")+` && `+chartPoints+` >= 3`)
	if got := u.attrs(testID("app-step"), "data-state"); strings.Join(got, ",") != "current,pending" {
		t.Errorf("the strip's steps are %v, want current,pending", got)
	}
	if got := u.attrs(testID("metric-chart")+" .chart-threshold", "data-value"); strings.Join(got, ",") != "0.05,0.2" {
		t.Errorf("the chart's thresholds are %v, want 0.05 and 0.2", got)
	}
	u.accessible("rollout at a canary step")
	u.shot("app-rollout-canary", testID("app-actions"))
	u.click(testID("app-promote"))
	u.until("Healthy after the promotion", phase("Healthy"))
	if d := e.getDeployment(ns, "shop"); d.Spec.Template.Spec.Containers[0].Image != "registry.example.com/shop:v2" || *d.Spec.Replicas != 5 {
		t.Errorf("after the promotion the Deployment runs %s at %d replicas", d.Spec.Template.Spec.Containers[0].Image, *d.Spec.Replicas)
	}

	// v3 breaches its analysis at the first step: rolled back unasked.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"version":"v3"}}`))
	if err := kc.Patch(e.ctx, &v1alpha1.AppRollout{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns}}, patch); err != nil {
		t.Fatal(err)
	}
	u.until("v3 at its 20% step", current("20")+` && `+phase("Deploying"))
	prom.Set(t, "0.5")
	u.until("rolled back by the analysis", phase("RolledBack")+` && !!document.querySelector('[data-testid="app-rollback"]')`)
	if why := u.text(testID("app-rollback")); !strings.Contains(why, "metric error-rate failed") || !strings.Contains(why, "yes") {
		t.Errorf("the rollback says %q: want the failed metric and the restore verified", why)
	}
	if failed := u.attrs(testID("metric-chart")+` .pt[data-phase="Failed"]`, "data-value"); len(failed) == 0 {
		t.Error("the chart shows no failed measurement")
	}
	u.accessible("rolled-back rollout")
	u.shot("app-rollout-rolled-back", testID("app-analysis"))

	e.wantStalePromoteRefused(s, kc, ns)

	prom.Set(t, "0.01")
	u.click(testID("app-retry"))
	u.until("v3 again at its 20% step", current("20")+` && `+phase("Deploying"))
	u.click(testID("app-abort"))
	u.until("rolled back by the abort", phase("RolledBack"))
	if why := u.text(testID("app-rollback")); !strings.Contains(why, "aborted") {
		t.Errorf("the rollback after Abort says %q", why)
	}
	if d := e.getDeployment(ns, "shop"); d.Spec.Template.Spec.Containers[0].Image != "registry.example.com/shop:v2" {
		t.Errorf("after the abort the Deployment runs %s, want v2 back", d.Spec.Template.Spec.Containers[0].Image)
	}
	u.checkProblems()
}

// measuredCanary is AppRollout shop of ns to v2: a canary at 20 % held
// ten minutes, its error rate asked of the Prometheus at promURL every
// second (good below 0.05, bad above 0.2).
func measuredCanary(ns, promURL string) *v1alpha1.AppRollout {
	return &v1alpha1.AppRollout{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns}, Spec: v1alpha1.AppRolloutSpec{
		Version: "v2", ServiceAccountName: "deployer",
		UpgradeStrategy: v1alpha1.AppUpgradeStrategy{Type: v1alpha1.StrategyCanary, Canary: &v1alpha1.AppCanary{
			Enabled: true, Steps: []v1alpha1.AppCanaryStep{{Weight: 20, Pause: 600}, {Weight: 100}},
			Analysis: &v1alpha1.AppAnalysis{Metrics: []v1alpha1.Metric{{
				Name: "error-rate", Interval: &metav1.Duration{Duration: time.Second},
				SuccessCondition: "result[0] < 0.05", FailureCondition: "result[0] > 0.2",
				Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: promURL, Query: promtest.Gauge}},
			}}},
		}},
	}}
}

// wantStalePromoteRefused: a promote of the rolled-back rollout (a stale
// page's) answers 409 and is not recorded.
func (e *env) wantStalePromoteRefused(s *server, kc client.Client, ns string) {
	e.t.Helper()
	token := s.login(adminPassword)
	before := e.getRollout(kc, ns, "shop").Annotations[v1alpha1.AnnotationPromote]
	var refused apiError
	s.must(http.StatusConflict, "POST", "/api/apps/"+ns+"/shop/promote", token, nil, &refused)
	if !strings.Contains(refused.Message, "promote does not apply now") {
		e.t.Errorf("promote of a rolled-back rollout: %q", refused.Message)
	}
	if a := e.getRollout(kc, ns, "shop"); a.Annotations[v1alpha1.AnnotationPromote] != before {
		e.t.Errorf("the refused promote was recorded: %v (was %q)", a.Annotations, before)
	}
}

// appDeployment creates a Deployment of replicas pods running image.
func (e *env) appDeployment(ns, name, image string, replicas int32) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: image}}}}},
	}
	if _, err := e.cs.AppsV1().Deployments(ns).Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) getDeployment(ns, name string) *appsv1.Deployment {
	e.t.Helper()
	d, err := e.cs.AppsV1().Deployments(ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// appController runs `upshift controller` on the rollouts of ns, its
// runs in the env's namespace, looking at waiting rollouts every 200 ms.
func (e *env) appController(ns string) {
	e.t.Helper()
	cmd := exec.Command(e.bin, "controller", "--namespace", e.runsNS, "--watch-namespaces", ns,
		"--metrics-addr", "0", "--health-probe-addr", testenv.FreeAddr(e.t), "--app-poll", "200ms")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig)
	testenv.Start(e.t, "controller", cmd)
}

func (e *env) typedClient() client.Client {
	e.t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		e.t.Fatal(err)
	}
	kc, err := client.New(testenv.Cluster(e.t).RESTConfig(), client.Options{Scheme: s})
	if err != nil {
		e.t.Fatal(err)
	}
	return kc
}

func (e *env) getRollout(kc client.Client, ns, name string) *v1alpha1.AppRollout {
	e.t.Helper()
	a := &v1alpha1.AppRollout{}
	if err := kc.Get(e.ctx, types.NamespacedName{Namespace: ns, Name: name}, a); err != nil {
		e.t.Fatal(err)
	}
	return a
}
