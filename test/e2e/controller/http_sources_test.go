package controller_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The controller applies the CLI's and the server's rule: a url source
// over plain http:// is refused (Invalid, naming the field, nothing
// fetched or changed) unless the plan sets spec.allowInsecureHTTP or the
// controller runs with --allow-http-sources.
func TestControllerRefusesHTTPSourcesUnlessAllowed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		fmt.Fprintf(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: %s\ndata:\n  version: %q\n", e.ns, strings.Trim(r.URL.Path, "/"))
	})) // 127.0.0.1
	t.Cleanup(srv.Close)
	overHTTP := func(name, version string, allow bool) *v1alpha1.UpgradePlan {
		p := e.webPlan(name, version, version, "upgrader", false)
		p.Spec.Stages[0].Steps[0].Manifests.Source = v1alpha1.Source{URL: srv.URL + "/" + version}
		p.Spec.AllowInsecureHTTP = allow
		return p
	}

	ctl := e.startController("ctl-http", nil)
	e.createPlan(overHTTP("web-2", "2.0", false))
	got := e.waitCondition("web-2", v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonInvalid, time.Minute)
	c := findCondition(got, v1alpha1.ConditionStalled)
	for _, want := range []string{"spec.stages[0].steps[0].manifests.url: http:// is refused", "--allow-http-sources", "nothing was changed"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Stalled message does not say %q:\n%s", want, c.Message)
		}
	}
	if n := asked.Load(); n != 0 || e.webConfig() != startVersion {
		t.Fatalf("a refused plan: its source was asked %d times, web-config is %s", n, e.webConfig())
	}
	if err := e.dyn.Resource(plansGVR).Namespace(e.ns).Delete(e.ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	e.createPlan(overHTTP("web-3", "3.0", true))
	e.waitCondition("web-3", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)
	if got := e.webConfig(); got != "3.0" {
		t.Errorf("with spec.allowInsecureHTTP: web-config is %s, want 3.0", got)
	}

	ctl.Kill()
	e.startController("ctl-http-allowed", nil, "--allow-http-sources")
	e.createPlan(overHTTP("web-4", "4.0", false))
	e.waitCondition("web-4", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)
	if got := e.webConfig(); got != "4.0" {
		t.Errorf("with --allow-http-sources: web-config is %s, want 4.0", got)
	}
}
