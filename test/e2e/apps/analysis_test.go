package apps_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis/promtest"
)

// errorRate is the canary's analysis: the exporter's error ratio, asked
// of a real Prometheus every second; good below 0.05, bad above 0.2.
func errorRate(address string) *v1alpha1.AppAnalysis {
	return &v1alpha1.AppAnalysis{Metrics: []v1alpha1.Metric{{
		Name: "error-rate", Interval: &metav1.Duration{Duration: time.Second},
		SuccessCondition: "result[0] < 0.05", FailureCondition: "result[0] > 0.2",
		Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: address, Query: promtest.Gauge}},
	}}}
}

// A canary measured on a real Prometheus: a controller killed while it
// measures leaves the rollout at the same step and weight, the next goes
// on measuring; an inconclusive value holds the canary; a breach rolls it
// back to the Deployment as captured, with the down-migration.
func TestAnalysisHoldsAndRollsTheCanaryBack(t *testing.T) {
	t.Parallel()
	prom := promtest.Start(t, "0.01")
	e := newEnv(t)
	e.grant("deployer")
	e.deployment("pay", "registry.example.com/pay:v1", 10)
	before := e.waitReady("pay")
	first := e.startController("ctl-analysis")
	app := canaryRollout(e.ns, "pay", "v2", []v1alpha1.AppCanaryStep{{Weight: 30, Pause: 600}, {Weight: 100}})
	app.Spec.UpgradeStrategy.MigrationJob = &v1alpha1.AppMigrationJob{Image: "registry.example.com/pay-migrations:v2", RollbackCommand: []string{"down"}}
	app.Spec.UpgradeStrategy.Canary.Analysis = errorRate(prom.URL)
	if err := e.kc.Create(e.ctx, app); err != nil {
		t.Fatal(err)
	}
	measured := func(n int32) func(*v1alpha1.AppRollout) bool {
		return func(a *v1alpha1.AppRollout) bool {
			return a.Status.Analysis != nil && len(a.Status.Analysis.Metrics) == 1 && a.Status.Analysis.Metrics[0].Successful >= n
		}
	}
	held := e.waitFor("pay", "measured twice", time.Minute, measured(2))
	first.Kill()
	e.startController("ctl-analysis-2")
	again := e.waitFor("pay", "measured again after the restart", time.Minute, measured(held.Status.Analysis.Metrics[0].Successful+2))
	if st := again.Status; st.CanaryStep != 0 || st.CanaryWeight != 30 || !st.Analysis.StartedAt.Equal(&held.Status.Analysis.StartedAt) || st.Attempt != 1 {
		t.Errorf("after the restart: step %d at %d%%, analysis since %s (was %s), attempt %d", st.CanaryStep, st.CanaryWeight, st.Analysis.StartedAt, held.Status.Analysis.StartedAt, st.Attempt)
	}
	e.wantReplicaSets(map[string]int32{"pay:registry.example.com/pay:v1": 7, "pay-canary:registry.example.com/pay:v2": 3})

	prom.Set(t, "0.1")
	e.waitFor("pay", "held by an inconclusive analysis", time.Minute, func(a *v1alpha1.AppRollout) bool {
		c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionPaused)
		return c != nil && c.Reason == "InconclusiveAnalysis" && a.Status.Phase == v1alpha1.AppDeploying
	})
	prom.Set(t, "0.5")
	e.annotate("pay", v1alpha1.AnnotationPromote, "measure-again")
	done := e.waitFor("pay", "RolledBack", 2*time.Minute, func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppRolledBack })
	st := done.Status
	if st.Analysis.Phase != v1alpha1.AnalysisFailed || !strings.Contains(st.Rollback.Reason, "analysis: metric error-rate failed") || !strings.Contains(st.Rollback.Reason, "[0.5]") {
		t.Errorf("analysis %+v, rollback %+v", st.Analysis, st.Rollback)
	}
	if len(st.Rollback.Differences) > 0 || st.Rollback.DownMigrationJob == "" || !jobDone(e.job(st.Rollback.DownMigrationJob)) {
		t.Errorf("rollback %+v: want no differences and the down-migration done", st.Rollback)
	}
	if after := e.waitReady("pay"); !equality.Semantic.DeepEqual(before.Spec, after.Spec) || after.Spec.Replicas == nil || *after.Spec.Replicas != *ptr.To[int32](10) {
		t.Errorf("deployment after the rollback differs from its capture: replicas %d, image %s", *after.Spec.Replicas, after.Spec.Template.Spec.Containers[0].Image)
	}
}

// A Job metric: each measurement a Job of the rollout's namespace,
// created as its ServiceAccount and looked at again at each reconcile
// while it runs; result is its container's exit code (the local kubelet
// ends a Job pod whose image tag holds "fail" with code 1, others with
// 0). v2 measured 0 twice is promoted; v3's check exits 1 and the canary
// is rolled back.
func TestJobMetricJudgesTheCanaryByExitCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("deployer")
	e.deployment("shop", "registry.example.com/shop:v1", 4)
	e.waitReady("shop")
	e.startController("ctl-job-metric")
	smoke := func(image string) *v1alpha1.AppAnalysis {
		return &v1alpha1.AppAnalysis{Metrics: []v1alpha1.Metric{{Name: "smoke", Interval: &metav1.Duration{Duration: time.Second},
			Provider: v1alpha1.MetricProvider{Job: &v1alpha1.JobMetric{Image: image, Command: []string{"/smoke", "--against=shop-canary"}}}}}}
	}
	app := canaryRollout(e.ns, "shop", "v2", []v1alpha1.AppCanaryStep{{Weight: 50, Pause: 600}, {Weight: 100}})
	app.Spec.UpgradeStrategy.Canary.Analysis = smoke("registry.example.com/smoke:v2")
	if err := e.kc.Create(e.ctx, app); err != nil {
		t.Fatal(err)
	}
	good := e.waitFor("shop", "measured 0 twice by Jobs", time.Minute, func(a *v1alpha1.AppRollout) bool {
		an := a.Status.Analysis
		return an != nil && len(an.Metrics) == 1 && an.Metrics[0].Successful >= 2
	})
	if ms := good.Status.Analysis.Metrics[0].Measurements; ms[0].Value != "0" || ms[1].Value != "0" {
		t.Errorf("measurements %+v, want the exit code 0", ms)
	}
	jobs, err := e.cs.BatchV1().Jobs(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "type=analysis,app=shop"})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) < 2 || len(jobs.Items[0].OwnerReferences) != 1 || jobs.Items[0].Spec.Template.Spec.Containers[0].Image != "registry.example.com/smoke:v2" {
		t.Errorf("analysis Jobs: %d, first %+v", len(jobs.Items), jobs.Items)
	}
	e.annotate("shop", v1alpha1.AnnotationPromote, "go")
	e.waitFor("shop", "Healthy at v2", time.Minute, func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppHealthy })

	latest := e.rollout("shop")
	latest.Spec.Version = "v3"
	latest.Spec.UpgradeStrategy.Canary.Analysis = smoke("registry.example.com/smoke:fail")
	if err := e.kc.Update(e.ctx, latest); err != nil {
		t.Fatal(err)
	}
	done := e.waitFor("shop", "RolledBack by the failing Job", time.Minute, func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppRolledBack })
	if r := done.Status.Rollback; r == nil || !strings.Contains(r.Reason, "metric smoke failed") || !strings.Contains(r.Reason, "1") || !r.Restored {
		t.Errorf("rollback %+v: want the smoke metric's failure (exit code 1), restored", r)
	}
	if img := e.getDeployment("shop").Spec.Template.Spec.Containers[0].Image; img != "registry.example.com/shop:v2" {
		t.Errorf("after the rollback the Deployment runs %s, want v2", img)
	}
}
