package apps

import (
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis"
)

// analysisFor is the rollout's analysis of a kind (AnalysisCanary,
// AnalysisPrePromotion, AnalysisPostPromotion), nil without one.
func analysisFor(app *v1alpha1.AppRollout, kind string) *v1alpha1.AppAnalysis {
	s := app.Spec.UpgradeStrategy
	switch {
	case kind == v1alpha1.AnalysisCanary && canaryEnabled(app):
		return s.Canary.Analysis
	case kind == v1alpha1.AnalysisPrePromotion && s.Type == v1alpha1.StrategyBlueGreen && s.BlueGreen != nil:
		return s.BlueGreen.PrePromotionAnalysis
	case kind == v1alpha1.AnalysisPostPromotion && s.Type == v1alpha1.StrategyBlueGreen && s.BlueGreen != nil:
		return s.BlueGreen.PostPromotionAnalysis
	}
	return nil
}

// running is the analysis the status says runs, nil when none does.
func running(app *v1alpha1.AppRollout) (*v1alpha1.AppAnalysis, *v1alpha1.AppAnalysisStatus) {
	an := app.Status.Analysis
	if an == nil || an.Phase != v1alpha1.AnalysisRunning || !moving(app.Status.Phase) {
		return nil, nil
	}
	a := analysisFor(app, an.Kind)
	if a == nil {
		return nil, nil
	}
	return a, an
}

// DueMetrics are the metrics of the rollout's analysis to measure at now.
// The reconciler measures them before it decides, so Decide stays pure
// and the providers are asked at the edge.
func DueMetrics(app *v1alpha1.AppRollout, now time.Time) []v1alpha1.Metric {
	a, an := running(app)
	if a == nil {
		return nil
	}
	var due []v1alpha1.Metric
	for _, m := range a.Metrics {
		at, ok := analysis.Due(m, resultOf(an, m.Name), an.StartedAt.Time)
		if ok && !at.After(now) {
			due = append(due, m)
		}
	}
	return due
}

func resultOf(an *v1alpha1.AppAnalysisStatus, name string) v1alpha1.MetricResult {
	for _, r := range an.Metrics {
		if r.Name == name {
			return r
		}
	}
	return v1alpha1.MetricResult{Name: name, Phase: v1alpha1.AnalysisPending}
}

// analyse starts the analysis of a kind, records the measurements taken
// and judges it: a failed metric fails the rollout; an inconclusive one
// holds the rollout (stop is true) until upshift.dev/promote measures it
// anew. Otherwise status.analysis.phase says Running or Successful.
func (x *decider) analyse(kind string, a *v1alpha1.AppAnalysis) (d Decision, stop bool) {
	if x.st.Analysis == nil || x.st.Analysis.Kind != kind {
		x.st.Analysis = &v1alpha1.AppAnalysisStatus{Kind: kind, Phase: v1alpha1.AnalysisRunning, StartedAt: x.now}
		x.event(false, "AnalysisStarted", fmt.Sprintf("%s analysis of %d metric(s) started", kind, len(a.Metrics)))
	}
	an := x.st.Analysis
	if an.Phase == v1alpha1.AnalysisSuccessful {
		return Decision{}, false
	}
	results := make([]v1alpha1.MetricResult, len(a.Metrics))
	inconclusive := ""
	for i, m := range a.Metrics {
		results[i] = resultOf(an, m.Name)
		if meas, ok := x.o.Measurements[m.Name]; ok {
			analysis.Record(m, &results[i], meas)
		}
		switch r := results[i]; r.Phase {
		case v1alpha1.AnalysisFailed, v1alpha1.AnalysisError:
			an.Metrics, an.Phase = results, v1alpha1.AnalysisFailed
			return x.fail(fmt.Sprintf("analysis: metric %s %s: %s (%s)", m.Name, lower(r.Phase), r.Message, lastValues(r))), true
		case v1alpha1.AnalysisInconclusive:
			inconclusive = fmt.Sprintf("metric %s: %s (%s)", m.Name, r.Message, lastValues(r))
		}
	}
	an.Metrics = results
	if inconclusive == "" {
		an.Phase = analysis.Verdict(results, len(results))
		return Decision{}, false
	}
	if x.promoted() {
		for i := range an.Metrics {
			if an.Metrics[i].Phase == v1alpha1.AnalysisInconclusive {
				an.Metrics[i] = v1alpha1.MetricResult{Name: an.Metrics[i].Name, Phase: v1alpha1.AnalysisPending}
			}
		}
		an.Phase, an.StartedAt = v1alpha1.AnalysisRunning, x.now
		x.event(false, "AnalysisResumed", "promoted: the inconclusive metrics are measured anew")
		return Decision{}, false
	}
	if an.Phase != v1alpha1.AnalysisInconclusive {
		x.event(true, "AnalysisInconclusive", inconclusive)
	}
	an.Phase = v1alpha1.AnalysisInconclusive
	x.st.Message = "analysis inconclusive, the rollout holds: " + inconclusive + "; upshift app promote measures it anew and goes on, upshift app abort rolls back"
	return Decision{}, true
}

// canaryAnalysis runs the canary's background analysis from its starting
// step.
func (x *decider) canaryAnalysis() (d Decision, stop bool) {
	a := analysisFor(x.app, v1alpha1.AnalysisCanary)
	if a == nil || x.st.CanaryStep < a.StartingStep {
		return Decision{}, false
	}
	return x.analyse(v1alpha1.AnalysisCanary, a)
}

// stopAnalysis ends the analysis at the promotion: a metric still running
// within its limits is successful.
func (x *decider) stopAnalysis() {
	an := x.st.Analysis
	if an == nil || an.Phase != v1alpha1.AnalysisRunning {
		return
	}
	for i := range an.Metrics {
		analysis.Stop(&an.Metrics[i])
	}
	an.Phase = analysis.Verdict(an.Metrics, len(an.Metrics))
}

// nextMeasurement is how soon the analysis's next measurement is due (0:
// none is).
func (x *decider) nextMeasurement() time.Duration {
	a, an := running(&v1alpha1.AppRollout{ObjectMeta: x.app.ObjectMeta, Spec: x.app.Spec, Status: *x.st})
	if a == nil {
		return 0
	}
	var next time.Duration
	for _, m := range a.Metrics {
		at, ok := analysis.Due(m, resultOf(an, m.Name), an.StartedAt.Time)
		if !ok {
			continue
		}
		d := max(at.Sub(x.o.Now), soon)
		if x.o.Pending[m.Name] {
			d = max(x.o.Poll, soon) // its Job runs: look again after a poll, not at once
		}
		if next == 0 || d < next {
			next = d
		}
	}
	return next
}

// lastValues shows a metric's last few values, newest last.
func lastValues(r v1alpha1.MetricResult) string {
	ms := r.Measurements
	if len(ms) > 3 {
		ms = ms[len(ms)-3:]
	}
	out := "last:"
	for _, m := range ms {
		v := m.Value
		if m.Phase == v1alpha1.AnalysisError {
			v = "error: " + m.Message
		}
		out += " " + v
	}
	if len(ms) == 0 {
		return "no measurement"
	}
	return out
}

func lower(p v1alpha1.AnalysisPhase) string {
	if p == v1alpha1.AnalysisError {
		return "could not be measured"
	}
	return map[v1alpha1.AnalysisPhase]string{v1alpha1.AnalysisFailed: "failed"}[p]
}
