package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A controller started with --gate-hosts refuses, before anything
// changes, a plan whose metric is measured on another host, naming the
// field; a plan whose gates keep to those hosts runs.
func TestGateHostsBoundWhatPlansReach(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("upgrader")
	e.startController("ctl-egress", nil, "--gate-hosts", "*.svc.cluster.local,127.0.0.1")

	p := e.configPlan("metadata")
	p.Spec.Stages[0].Gates = []v1alpha1.Gate{{Metric: &v1alpha1.Metric{Name: "errors",
		Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: "http://metadata.google.internal/computeMetadata/v1/"}}}}}
	e.createPlan(p)
	got := e.waitCondition("metadata", v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonPreflightFailed, time.Minute)
	msg := findCondition(got, v1alpha1.ConditionStalled).Message
	for _, want := range []string{"spec.stages[0].gates[0].metric.provider.web.url", "host metadata.google.internal is not one", "nothing was changed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Stalled message does not say %q:\n%s", want, msg)
		}
	}
	if run := e.run(e.ns + ".metadata"); run != nil {
		t.Errorf("a run was made for the refused plan: %s", run.Status.Phase)
	}

	e.createPlan(e.configPlan("config"))
	e.waitCondition("config", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, time.Minute)
}
