package apps_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A blue-green rollout: the preview Service serves the new version while
// the active one serves the old; the promotion switches the active one;
// then the Deployment itself runs the new version behind it and the
// Services are as they were, the preview gone.
func TestBlueGreenSwitchesAtThePromotion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("deployer")
	e.deployment("shop", "registry.example.com/shop:v1", 3)
	e.service("shop")
	e.service("shop-preview")
	e.startController("ctl-bluegreen")
	if err := e.kc.Create(e.ctx, blueGreenRollout(e.ns, &v1alpha1.AppBlueGreen{ActiveService: "shop", PreviewService: "shop-preview",
		AutoPromotionEnabled: ptr.To(false), ScaleDownDelaySeconds: ptr.To[int32](3)})); err != nil {
		t.Fatal(err)
	}
	e.waitFor("shop", "with its preview ready", time.Minute, func(a *v1alpha1.AppRollout) bool {
		return a.Status.BlueGreen != nil && a.Status.BlueGreen.PreviewReadyAt != nil
	})
	e.waitServes("shop-preview", "registry.example.com/shop:v2", 3)
	e.waitServes("shop", "registry.example.com/shop:v1", 3)

	e.annotate("shop", v1alpha1.AnnotationPromote, "go")
	e.waitServes("shop", "registry.example.com/shop:v2", 3)
	done := e.waitFor("shop", "Healthy", time.Minute, func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppHealthy })
	if done.Status.BlueGreen.SwitchedAt == nil {
		t.Errorf("no switch recorded: %+v", done.Status.BlueGreen)
	}
	if sel := e.getService("shop").Spec.Selector; len(sel) != 1 || sel["app"] != "shop" {
		t.Errorf("active selector after the rollout: %v, want it as it was", sel)
	}
	if img := e.getDeployment("shop").Spec.Template.Spec.Containers[0].Image; img != "registry.example.com/shop:v2" {
		t.Errorf("deployment runs %s", img)
	}
	if _, err := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, "shop-preview", metav1.GetOptions{}); err == nil {
		t.Error("the preview deployment is still there")
	}
	e.waitServes("shop", "registry.example.com/shop:v2", 3)
}

// A pre-promotion analysis that fails (a JSON metric from 127.0.0.1)
// rolls back before the switch: the active Service is as it was
// captured, its pods the old version's; the preview is gone.
func TestBlueGreenAnalysisFailureLeavesActiveAlone(t *testing.T) {
	t.Parallel()
	metric := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"errorRate": 0.5}`) }))
	t.Cleanup(metric.Close)
	e := newEnv(t)
	e.grant("deployer")
	e.deployment("shop", "registry.example.com/shop:v1", 2)
	before := e.service("shop")
	e.service("shop-preview")
	e.startController("ctl-bluegreen-fail")
	pre := &v1alpha1.AppAnalysis{Metrics: []v1alpha1.Metric{{Name: "errors", Count: ptr.To[int32](2), Interval: &metav1.Duration{Duration: time.Second},
		SuccessCondition: "result < 0.05", Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: metric.URL, JSONPath: "{.errorRate}"}}}}}
	if err := e.kc.Create(e.ctx, blueGreenRollout(e.ns, &v1alpha1.AppBlueGreen{ActiveService: "shop", PreviewService: "shop-preview", PrePromotionAnalysis: pre})); err != nil {
		t.Fatal(err)
	}
	done := e.waitFor("shop", "RolledBack", time.Minute, func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppRolledBack })
	if r := done.Status.Rollback; !strings.Contains(r.Reason, "analysis: metric errors failed") || len(r.Differences) > 0 || done.Status.BlueGreen.SwitchedAt != nil {
		t.Errorf("rollback %+v, blue-green %+v", r, done.Status.BlueGreen)
	}
	if after := e.getService("shop"); !equality.Semantic.DeepEqual(before.Spec.Selector, after.Spec.Selector) {
		t.Errorf("active selector %v after the rollback, was %v", after.Spec.Selector, before.Spec.Selector)
	}
	e.waitServes("shop", "registry.example.com/shop:v1", 2)
	if _, err := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, "shop-preview", metav1.GetOptions{}); err == nil {
		t.Error("the preview deployment is still there")
	}
}

func blueGreenRollout(ns string, bg *v1alpha1.AppBlueGreen) *v1alpha1.AppRollout {
	return &v1alpha1.AppRollout{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.AppRolloutSpec{Version: "v2", ServiceAccountName: "deployer",
			UpgradeStrategy: v1alpha1.AppUpgradeStrategy{Type: v1alpha1.StrategyBlueGreen, BlueGreen: bg}},
	}
}

// service creates a Service selecting app=shop.
func (e *env) service(name string) *corev1.Service {
	e.t.Helper()
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "shop"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	got, err := e.cs.CoreV1().Services(e.ns).Create(e.ctx, s, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func (e *env) getService(name string) *corev1.Service {
	e.t.Helper()
	s, err := e.cs.CoreV1().Services(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// waitServes waits until the Service's ready endpoints are n pods, all
// running image: what the Service sends traffic to, as its
// EndpointSlices say (no pod is dialled).
func (e *env) waitServes(svc, image string, n int) {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	var got []string
	for time.Now().Before(deadline) {
		if got = e.served(svc); len(got) == n && strings.Count(strings.Join(got, " "), image) == n {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatalf("service %s serves %v, want %d pods of %s", svc, got, n, image)
}

// served lists the images of the pods behind the Service's ready
// endpoints.
func (e *env) served(svc string) []string {
	e.t.Helper()
	list, err := e.cs.DiscoveryV1().EndpointSlices(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			if ep.TargetRef == nil || ep.Conditions.Ready == nil || !*ep.Conditions.Ready {
				continue
			}
			pod, err := e.cs.CoreV1().Pods(e.ns).Get(e.ctx, ep.TargetRef.Name, metav1.GetOptions{})
			if err != nil || pod.DeletionTimestamp != nil {
				continue
			}
			out = append(out, pod.Spec.Containers[0].Image)
		}
	}
	sort.Strings(out)
	return out
}
