package analysis

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func i32(v int32) *int32 { return &v }

var t0 = time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)

// record adds measurements of the given phases, one a minute, and
// returns the result.
func record(m v1alpha1.Metric, phases ...v1alpha1.AnalysisPhase) v1alpha1.MetricResult {
	var res v1alpha1.MetricResult
	for i, p := range phases {
		Record(m, &res, v1alpha1.Measurement{Phase: p, Message: "boom", TakenAt: metav1.NewTime(t0.Add(time.Duration(i) * time.Minute))})
	}
	return res
}

const (
	ok   = v1alpha1.AnalysisSuccessful
	bad  = v1alpha1.AnalysisFailed
	meh  = v1alpha1.AnalysisInconclusive
	oops = v1alpha1.AnalysisError
)

// A metric ends by its limits first, then by its count; a provider that
// never answers ends it in Error, never successful.
func TestRecordJudgesTheMetric(t *testing.T) {
	every := &metav1.Duration{Duration: time.Minute}
	for _, tt := range []struct {
		name   string
		metric v1alpha1.Metric
		got    []v1alpha1.AnalysisPhase
		want   v1alpha1.AnalysisPhase
	}{
		{"once, good", v1alpha1.Metric{}, []v1alpha1.AnalysisPhase{ok}, ok},
		{"once, bad", v1alpha1.Metric{}, []v1alpha1.AnalysisPhase{bad}, bad},
		{"three of five so far", v1alpha1.Metric{Interval: every, Count: i32(5)}, []v1alpha1.AnalysisPhase{ok, ok, ok}, v1alpha1.AnalysisRunning},
		{"five of five", v1alpha1.Metric{Interval: every, Count: i32(5)}, []v1alpha1.AnalysisPhase{ok, ok, ok, ok, ok}, ok},
		{"a failure within the limit", v1alpha1.Metric{Interval: every, Count: i32(3), FailureLimit: i32(1)}, []v1alpha1.AnalysisPhase{ok, bad, ok}, ok},
		{"a failure past the limit", v1alpha1.Metric{Interval: every, Count: i32(5), FailureLimit: i32(1)}, []v1alpha1.AnalysisPhase{bad, ok, bad}, bad},
		{"inconclusive", v1alpha1.Metric{Interval: every, Count: i32(5)}, []v1alpha1.AnalysisPhase{ok, meh}, meh},
		{"errors within the limit", v1alpha1.Metric{}, []v1alpha1.AnalysisPhase{oops, oops, oops, oops}, v1alpha1.AnalysisRunning},
		{"errors past the limit", v1alpha1.Metric{}, []v1alpha1.AnalysisPhase{oops, oops, oops, oops, oops}, oops},
		{"errors broken by a measurement", v1alpha1.Metric{Interval: every, Count: i32(9)}, []v1alpha1.AnalysisPhase{oops, oops, oops, oops, ok, oops, oops, oops, oops}, v1alpha1.AnalysisRunning},
		{"errors do not count toward the count", v1alpha1.Metric{Interval: every, Count: i32(2)}, []v1alpha1.AnalysisPhase{oops, ok, oops}, v1alpha1.AnalysisRunning},
		{"until stopped", v1alpha1.Metric{Interval: every}, []v1alpha1.AnalysisPhase{ok, ok, ok, ok, ok, ok}, v1alpha1.AnalysisRunning},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := record(tt.metric, tt.got...)
			if res.Phase != tt.want {
				t.Errorf("phase %s (%s), want %s", res.Phase, res.Message, tt.want)
			}
			if tt.want.Completed() && res.Message == "" {
				t.Errorf("ended without a message")
			}
		})
	}
}

// The list of measurements is bounded; the counts go on.
func TestRecordKeepsTheLastMeasurements(t *testing.T) {
	m := v1alpha1.Metric{Interval: &metav1.Duration{Duration: time.Minute}, FailureLimit: i32(100)}
	phases := make([]v1alpha1.AnalysisPhase, 50)
	for i := range phases {
		phases[i] = ok
	}
	phases[49] = bad
	res := record(m, phases...)
	if len(res.Measurements) != kept || res.Count != 50 || res.Failed != 1 || res.Measurements[kept-1].Phase != bad {
		t.Errorf("kept %d measurements (last %s), count %d, failed %d; want %d, the failure last, 50, 1", len(res.Measurements), res.Measurements[len(res.Measurements)-1].Phase, res.Count, res.Failed, kept)
	}
	if !strings.Contains(record(v1alpha1.Metric{}, oops, oops, oops, oops, oops).Message, "boom") {
		t.Errorf("an Error metric's message does not carry the last measurement's")
	}
}

// The first measurement is due after the initial delay, the next ones
// an interval after the last; errors of a metric measured once are tried
// again after errorRetry; an ended metric is due no more.
func TestDue(t *testing.T) {
	every := v1alpha1.Metric{Interval: &metav1.Duration{Duration: 30 * time.Second}, InitialDelay: &metav1.Duration{Duration: time.Minute}, Count: i32(3)}
	if at, ok := Due(every, v1alpha1.MetricResult{}, t0); !ok || !at.Equal(t0.Add(time.Minute)) {
		t.Errorf("first due %v %v, want after the initial delay", at, ok)
	}
	res := record(every, ok)
	if at, ok := Due(every, res, t0); !ok || !at.Equal(t0.Add(30*time.Second)) {
		t.Errorf("second due %v %v, want an interval after the first", at, ok)
	}
	once := record(v1alpha1.Metric{}, oops)
	if at, ok := Due(v1alpha1.Metric{}, once, t0); !ok || !at.Equal(t0.Add(errorRetry)) {
		t.Errorf("after an error, due %v %v, want %s later", at, ok, errorRetry)
	}
	if _, ok := Due(v1alpha1.Metric{}, record(v1alpha1.Metric{}, bad), t0); ok {
		t.Errorf("a failed metric is still due")
	}
}

// An analysis fails as soon as a metric fails, and is otherwise decided
// once every metric ended.
func TestVerdict(t *testing.T) {
	r := func(p v1alpha1.AnalysisPhase) v1alpha1.MetricResult { return v1alpha1.MetricResult{Phase: p} }
	for _, tt := range []struct {
		name    string
		results []v1alpha1.MetricResult
		metrics int
		want    v1alpha1.AnalysisPhase
	}{
		{"all good", []v1alpha1.MetricResult{r(ok), r(ok)}, 2, ok},
		{"one not started", []v1alpha1.MetricResult{r(ok)}, 2, v1alpha1.AnalysisRunning},
		{"one failed, one running", []v1alpha1.MetricResult{r(v1alpha1.AnalysisRunning), r(bad)}, 2, bad},
		{"one in error", []v1alpha1.MetricResult{r(ok), r(oops)}, 2, bad},
		{"inconclusive, one still running", []v1alpha1.MetricResult{r(meh), r(v1alpha1.AnalysisRunning)}, 2, v1alpha1.AnalysisRunning},
		{"inconclusive, all ended", []v1alpha1.MetricResult{r(meh), r(ok)}, 2, meh},
	} {
		if got := Verdict(tt.results, tt.metrics); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
	stopped := record(v1alpha1.Metric{Interval: &metav1.Duration{Duration: time.Minute}}, ok, ok)
	Stop(&stopped)
	if stopped.Phase != ok {
		t.Errorf("a background metric stopped within its limits: %s, want %s", stopped.Phase, ok)
	}
}
