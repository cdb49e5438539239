package engine_test

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// Markers the test webhook reacts to, anywhere in the object written:
// denyMarker in a create or update is refused with 403, failMarker with
// 500 (the answer of a broken admission chain or of one bad resource);
// deleteMarker on an object refuses its deletion with 500. Restores write
// the old content, which carries no marker, so they pass.
const (
	denyMarker   = "deny-me"
	failMarker   = "error-me"
	deleteMarker = "no-delete-me"
)

// refusingWebhook starts a validating webhook on 127.0.0.1 (TLS) and
// registers it for the kinds the step kinds write. It counts the
// requests it refused.
func (w *world) refusingWebhook() *atomic.Int64 {
	w.t.Helper()
	refused := new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(rw, "bad review", http.StatusBadRequest)
			return
		}
		req := review.Request
		resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
		body := string(req.Object.Raw)
		switch {
		case req.Operation == admissionv1.Delete && strings.Contains(string(req.OldObject.Raw), deleteMarker):
			resp.Allowed, resp.Result = false, &metav1.Status{Code: 500, Message: "the deletion backend is broken"}
		case strings.Contains(body, failMarker):
			resp.Allowed, resp.Result = false, &metav1.Status{Code: 500, Message: "the validation backend is broken"}
		case strings.Contains(body, denyMarker):
			resp.Allowed, resp.Result = false, &metav1.Status{Code: 403, Message: "policy forbids this object"}
		}
		if !resp.Allowed {
			refused.Add(1)
		}
		review.Response = resp
		review.Request = nil
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	srv.StartTLS()
	w.t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	url := srv.URL + "/validate"
	fail := admissionregv1.Fail
	none := admissionregv1.SideEffectClassNone
	timeout := int32(5)
	rule := func(group, version, resource string) admissionregv1.RuleWithOperations {
		return admissionregv1.RuleWithOperations{
			Operations: []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update, admissionregv1.Delete},
			Rule:       admissionregv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}},
		}
	}
	cfg := &admissionregv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-marked"},
		Webhooks: []admissionregv1.ValidatingWebhook{{
			Name:                    "refuse.marked.test",
			ClientConfig:            admissionregv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules:                   []admissionregv1.RuleWithOperations{rule("apps", "v1", "deployments"), rule("", "v1", "configmaps"), rule("batch", "v1", "jobs"), rule("apiextensions.k8s.io", "v1", "customresourcedefinitions")},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}},
	}
	if _, err := w.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(w.ctx, cfg, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("register the webhook: %v", err)
	}
	// The API server picks the configuration up from its informer.
	w.eventually("the webhook refuses a marked ConfigMap", func() (bool, string) {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "shop"}, Data: map[string]string{"x": denyMarker}}
		_, err := w.cs.CoreV1().ConfigMaps("shop").Create(w.ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "policy forbids"), "probe: " + errString(err)
	})
	refused.Store(0)
	return refused
}

func errString(err error) string {
	if err == nil {
		return "allowed"
	}
	return err.Error()
}

// TestRefusingAPIFailsTheStepInEveryKind: an admission webhook that keeps
// refusing, or answers 500 for one resource, is an answer from a reachable
// API server: the step fails and the run rolls back (exit 2, restore
// verified) in every step kind, never stops "to resume later" (exit 4).
func TestRefusingAPIFailsTheStepInEveryKind(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.installCache()
	refused := w.refusingWebhook()

	gw := `apiVersion: apps/v1
kind: Deployment
metadata: {name: gw, namespace: shop, labels: {app: gw}, annotations: {guard: ` + deleteMarker + `}}
spec:
  replicas: 1
  selector: {matchLabels: {app: gw}}
  template:
    metadata: {labels: {app: gw}}
    spec:
      containers: [{name: gw, image: "example.com/shop/gw:1.0.0"}]
`
	var gwObj appsv1.Deployment
	if err := yaml.Unmarshal([]byte(gw), &gwObj); err != nil {
		t.Fatal(err)
	}
	if _, err := w.cs.AppsV1().Deployments("shop").Create(w.ctx, &gwObj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment shop/gw: %v", err)
	}

	crd := func(marker string) string {
		return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.shop.example.com}
spec:
  group: shop.example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, description: "` + marker + `", x-kubernetes-preserve-unknown-fields: true}
`
	}
	tests := []struct {
		kind, step string
		files      map[string]string
	}{
		{"manifests 403", `manifests: {path: m.yaml}`, map[string]string{"m.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: " + denyMarker + "}\n"}},
		{"manifests 500", `manifests: {path: m.yaml}`, map[string]string{"m.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: " + failMarker + "}\n"}},
		{"crds", `crds: {path: crd.yaml}`, map[string]string{"crd.yaml": crd(failMarker)}},
		{"image", `image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.0-` + failMarker + `"}}`, nil},
		{"job", `job: {path: job.yaml}`, map[string]string{"job.yaml": jobManifest("migrate-marked", "2.0.0-"+failMarker)}},
		{"helm", `helm: {release: shop-cache, namespace: shop, chart: cache-1.0.0, values: {tag: "2.0.0-` + failMarker + `"}}`, nil},
		{"recreate", `recreate: {apiVersion: apps/v1, kind: Deployment, namespace: shop, selector: app=gw, from: {path: gw.yaml}}`, map[string]string{"gw.yaml": gw}},
	}
	for i, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			before := w.capture()
			dir := w.t.TempDir()
			writeCacheChart(t, dir, "1.0.0")
			for name, content := range tt.files {
				write(t, dir+"/"+name, content)
			}
			name := "refused-" + strings.NewReplacer(" ", "-").Replace(tt.kind)
			write(t, dir+"/plan.yaml", `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: `+name+`}
spec:
  version: 2.0.0
  stages:
  - name: change
    steps:
    - name: marked
      timeout: 1m
      `+tt.step+`
`)
			start := time.Now()
			r := w.upshift(nil, "apply", "-f", dir+"/plan.yaml")
			if r.code != 2 {
				t.Fatalf("a step the API server keeps refusing must fail and roll back (exit 2), got %s", r)
			}
			if refused.Load() == 0 {
				t.Fatalf("the webhook refused nothing: the test did not exercise a refusal\n%s", r)
			}
			mustContain(t, "apply output", r.stdout+r.stderr, "restore verified")
			w.assertRestored(before)
			t.Logf("case %d (%s): exit 2 after %s", i, tt.kind, time.Since(start).Round(100*time.Millisecond))
			refused.Store(0)
		})
	}
}
