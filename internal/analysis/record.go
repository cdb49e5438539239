package analysis

import (
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// kept bounds the measurements a result keeps (the CRD's maxItems): the
// counts judge the metric, the list shows its recent values.
const kept = 20

// errorRetry is how long after a measurement that could not be taken the
// next is tried, for a metric measured once (no interval).
const errorRetry = 10 * time.Second

// limitOr is a limit or its default.
func limitOr(l *int32, def int32) int32 {
	if l != nil {
		return *l
	}
	return def
}

// count is how many measurements end the metric: its count; without one,
// once when it has no interval, and never (0) with one.
func count(m v1alpha1.Metric) int32 {
	switch {
	case m.Count != nil && *m.Count > 0:
		return *m.Count
	case m.Interval == nil:
		return 1
	}
	return 0
}

// Record adds a measurement to the metric's result and judges the metric
// anew. A measurement that could not be taken (Error) counts toward the
// consecutive-error limit, not toward the count: a metric whose provider
// never answers does not end successful.
func Record(m v1alpha1.Metric, res *v1alpha1.MetricResult, meas v1alpha1.Measurement) {
	res.Name = m.Name
	if meas.Phase == v1alpha1.AnalysisError {
		res.Error++
		res.ConsecutiveError++
	} else {
		res.Count++
		res.ConsecutiveError = 0
	}
	switch meas.Phase {
	case v1alpha1.AnalysisSuccessful:
		res.Successful++
	case v1alpha1.AnalysisFailed:
		res.Failed++
	case v1alpha1.AnalysisInconclusive:
		res.Inconclusive++
	}
	res.Measurements = append(res.Measurements, meas)
	if over := len(res.Measurements) - kept; over > 0 {
		res.Measurements = append([]v1alpha1.Measurement(nil), res.Measurements[over:]...)
	}
	res.Phase, res.Message = assess(m, res)
}

// assess is the metric's phase from its counts, the limits first.
func assess(m v1alpha1.Metric, res *v1alpha1.MetricResult) (v1alpha1.AnalysisPhase, string) {
	failures := limitOr(m.FailureLimit, v1alpha1.DefaultFailureLimit)
	inconclusive := limitOr(m.InconclusiveLimit, v1alpha1.DefaultInconclusiveLimit)
	errs := limitOr(m.ConsecutiveErrorLimit, v1alpha1.DefaultConsecutiveErrorLimit)
	switch {
	case res.Failed > failures:
		return v1alpha1.AnalysisFailed, fmt.Sprintf("%d of %d measurements failed; failureLimit is %d", res.Failed, res.Count, failures)
	case res.Inconclusive > inconclusive:
		return v1alpha1.AnalysisInconclusive, fmt.Sprintf("%d of %d measurements were inconclusive; inconclusiveLimit is %d", res.Inconclusive, res.Count, inconclusive)
	case res.ConsecutiveError > errs:
		last := res.Measurements[len(res.Measurements)-1].Message
		return v1alpha1.AnalysisError, fmt.Sprintf("%d measurements in a row could not be taken (consecutiveErrorLimit is %d), the last: %s", res.ConsecutiveError, errs, last)
	case count(m) > 0 && res.Count >= count(m):
		return v1alpha1.AnalysisSuccessful, fmt.Sprintf("%d measurements, %d failed, %d inconclusive: within the limits", res.Count, res.Failed, res.Inconclusive)
	}
	return v1alpha1.AnalysisRunning, ""
}

// Stop ends a metric measured until stopped (a background analysis): it
// is successful if it is still running, within its limits.
func Stop(res *v1alpha1.MetricResult) {
	if !res.Phase.Completed() {
		res.Phase = v1alpha1.AnalysisSuccessful
		res.Message = fmt.Sprintf("stopped after %d measurements, %d failed, %d inconclusive: within the limits", res.Count, res.Failed, res.Inconclusive)
	}
}

// Due is when the metric's next measurement is to be taken: the analysis
// start plus the initial delay for the first, the last measurement's time
// plus the interval after it. ok is false once the metric's phase is
// final.
func Due(m v1alpha1.Metric, res v1alpha1.MetricResult, started time.Time) (at time.Time, ok bool) {
	if res.Phase.Completed() {
		return time.Time{}, false
	}
	if len(res.Measurements) == 0 {
		if m.InitialDelay != nil {
			started = started.Add(m.InitialDelay.Duration)
		}
		return started, true
	}
	last := res.Measurements[len(res.Measurements)-1]
	wait := errorRetry
	if m.Interval != nil {
		wait = m.Interval.Duration
	}
	return last.TakenAt.Add(wait), true
}

// Verdict is an analysis's phase from its metrics' results (metrics is
// how many it has), as Argo Rollouts sums an AnalysisRun up: failed as
// soon as one failed or ended in error; once all ended, inconclusive when
// one is, successful otherwise; running until then.
func Verdict(results []v1alpha1.MetricResult, metrics int) v1alpha1.AnalysisPhase {
	ended, inconclusive := 0, false
	for _, r := range results {
		switch r.Phase {
		case v1alpha1.AnalysisFailed, v1alpha1.AnalysisError:
			return v1alpha1.AnalysisFailed
		case v1alpha1.AnalysisInconclusive:
			inconclusive = true
		}
		if r.Phase.Completed() {
			ended++
		}
	}
	switch {
	case ended < metrics:
		return v1alpha1.AnalysisRunning
	case inconclusive:
		return v1alpha1.AnalysisInconclusive
	}
	return v1alpha1.AnalysisSuccessful
}
