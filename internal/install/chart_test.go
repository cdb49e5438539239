package install_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	corev1 "k8s.io/api/core/v1"

	"github.com/upshift-dev/upshift/internal/install"
)

// `helm lint --strict` finds nothing to say but INFO (the chart has no icon),
// with the defaults and with every optional part on.
func TestChartLint(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"defaults":       nil,
		"serviceMonitor": values("serviceMonitor.enabled", true, "replicas", int64(2)),
	} {
		l := lint.AllWithKubeVersion(chartDir, vals, namespace, install.KubeVersion)
		for _, m := range l.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("%s: helm lint: %s", name, m)
			} else {
				t.Logf("%s: helm lint: %s", name, m)
			}
		}
	}
}

// The chart's crds/ are config/crd/bases, byte for byte (`make generate`
// copies them).
func TestChartCRDsAreConfigCRDs(t *testing.T) {
	want, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(want) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v): run `make generate`", err)
	}
	got, _ := filepath.Glob(filepath.Join(chartDir, "crds", "*"))
	var wantNames, gotNames []string
	for _, f := range want {
		wantNames = append(wantNames, filepath.Base(f))
	}
	for _, f := range got {
		gotNames = append(gotNames, filepath.Base(f))
	}
	if d := cmp.Diff(wantNames, gotNames); d != "" {
		t.Errorf("charts/upshift/crds holds other files than config/crd/bases (-want +got): run `make generate`:\n%s", d)
	}
	for _, f := range want {
		w, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := os.ReadFile(filepath.Join(chartDir, "crds", filepath.Base(f)))
		if err != nil {
			continue // reported above
		}
		if !bytes.Equal(w, g) {
			t.Errorf("charts/upshift/crds/%s differs from config/crd/bases/%s: run `make generate`", filepath.Base(f), filepath.Base(f))
		}
	}
}

func TestServiceMonitorOnlyWhenEnabled(t *testing.T) {
	if got := install.Find(renderChart(t, nil), "ServiceMonitor"); len(got) != 0 {
		t.Errorf("defaults render %d ServiceMonitors, want none (serviceMonitor.enabled is false)", len(got))
	}
	objs := renderChart(t, values("serviceMonitor.enabled", true, "serviceMonitor.labels", map[string]any{"release": "prom"}))
	sms := install.Find(objs, "ServiceMonitor")
	if len(sms) != 1 {
		t.Fatalf("serviceMonitor.enabled renders %d ServiceMonitors, want 1", len(sms))
	}
	sm := sms[0]
	if sm.GetLabels()["release"] != "prom" || sm.GetNamespace() != namespace {
		t.Errorf("ServiceMonitor labels %v in %q; want serviceMonitor.labels among them, in the release's namespace", sm.GetLabels(), sm.GetNamespace())
	}
	svcs := install.Find(objs, "Service")
	if len(svcs) != 1 {
		t.Fatalf("%d Services, want the metrics Service", len(svcs))
	}
	svc, err := install.Convert[corev1.Service](svcs[0])
	if err != nil {
		t.Fatal(err)
	}
	sel, _, _ := unstructuredMap(sm.Object, "spec", "selector", "matchLabels")
	if !selects(sel, svc.Labels) {
		t.Errorf("the ServiceMonitor's selector %v does not select the metrics Service (labels %v)", sel, svc.Labels)
	}
	ep, _ := sm.Object["spec"].(map[string]any)["endpoints"].([]any)
	if len(ep) != 1 || ep[0].(map[string]any)["port"] != svc.Spec.Ports[0].Name || ep[0].(map[string]any)["scheme"] != "https" {
		t.Errorf("ServiceMonitor endpoints %v; want port %q over https", ep, svc.Spec.Ports[0].Name)
	}
}

// Values that make no sense are refused, naming the value and the fix.
func TestChartRefusesReplicasWithoutLeaderElection(t *testing.T) {
	_, err := install.RenderChart(chartDir, release, namespace, values("replicas", int64(2), "leaderElection.enabled", false))
	if err == nil || !strings.Contains(err.Error(), "leaderElection.enabled=true") {
		t.Errorf("2 replicas without leader election: %v; want a refusal naming leaderElection.enabled", err)
	}
}

// values.schema.json refuses a misspelt or mistyped value, naming it.
func TestChartRefusesUnknownValues(t *testing.T) {
	for name, tc := range map[string]struct {
		vals map[string]any
		want string
	}{
		"misspelt": {values("replica", int64(2)), "replica"},
		"mistyped": {values("serviceMonitor.enabled", "yes"), "/serviceMonitor/enabled"},
		"bad port": {values("metrics.port", int64(0)), "/metrics/port"},
	} {
		_, err := install.RenderChart(chartDir, release, namespace, tc.vals)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want a refusal naming %s", name, err, tc.want)
		}
	}
}

// config/prometheus's ServiceMonitor scrapes config/default's metrics
// Service over HTTPS.
func TestKustomizeServiceMonitor(t *testing.T) {
	sms := install.Find(buildKustomize(t, filepath.Join(repoRoot, "config", "prometheus")), "ServiceMonitor")
	if len(sms) != 1 {
		t.Fatalf("config/prometheus holds %d ServiceMonitors, want 1", len(sms))
	}
	svcs := install.Find(buildKustomize(t, defaultDir), "Service")
	if len(svcs) != 1 {
		t.Fatalf("config/default holds %d Services, want the metrics Service", len(svcs))
	}
	sel, _, _ := unstructuredMap(sms[0].Object, "spec", "selector", "matchLabels")
	if !selects(sel, svcs[0].GetLabels()) || sms[0].GetNamespace() != svcs[0].GetNamespace() {
		t.Errorf("the ServiceMonitor (selector %v, namespace %s) does not select Service %s/%s (labels %v)",
			sel, sms[0].GetNamespace(), svcs[0].GetNamespace(), svcs[0].GetName(), svcs[0].GetLabels())
	}
	ep, _, _ := unstructuredSlice(sms[0].Object, "spec", "endpoints")
	if len(ep) != 1 || ep[0].(map[string]any)["port"] != "https" || ep[0].(map[string]any)["scheme"] != "https" {
		t.Errorf("endpoints %v, want port https over https", ep)
	}
}
