package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metric is one measurement taken during a rollout's analysis or a plan's
// metric gate, again and again, and judged, with the field names of Argo
// Rollouts' AnalysisTemplate metrics. The conditions are CEL (the
// Kubernetes expression language) over `result`, which is what the
// provider measured: for Prometheus, a number for a scalar and a list of
// numbers for a vector (result[0] < 0.05, as in Argo Rollouts).
//
// +kubebuilder:validation:XValidation:rule=`!has(self.count) || self.count <= 1 || has(self.interval)`,message="a count above 1 needs an interval between the measurements"
type Metric struct {
	// Name names the metric in status and messages.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Interval between two measurements. Without it the metric is
	// measured once.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
	// InitialDelay before the first measurement.
	// +optional
	InitialDelay *metav1.Duration `json:"initialDelay,omitempty"`
	// Count of measurements after which the metric is judged successful
	// (when no limit was passed). Absent, with an interval: measured until
	// the analysis is stopped (a background analysis); without one: once.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Count *int32 `json:"count,omitempty"`
	// SuccessCondition is a CEL expression over `result` that is true
	// when a measurement is good.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	SuccessCondition string `json:"successCondition,omitempty"`
	// FailureCondition is a CEL expression over `result` that is true
	// when a measurement is bad. With both conditions set, a measurement
	// for which neither holds is inconclusive.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	FailureCondition string `json:"failureCondition,omitempty"`
	// FailureLimit is how many failed measurements are tolerated: one
	// more fails the metric (default 0).
	// +optional
	// +kubebuilder:validation:Minimum=0
	FailureLimit *int32 `json:"failureLimit,omitempty"`
	// InconclusiveLimit is how many inconclusive measurements are
	// tolerated: one more makes the metric inconclusive, which pauses a
	// rollout for a person (default 0).
	// +optional
	// +kubebuilder:validation:Minimum=0
	InconclusiveLimit *int32 `json:"inconclusiveLimit,omitempty"`
	// Provider is where the metric is measured.
	Provider MetricProvider `json:"provider"`
	// ConsecutiveErrorLimit is how many measurements in a row may fail to
	// be taken (the provider unreachable, a query refused): one more ends
	// the metric in Error, which fails it (default 4).
	// +optional
	// +kubebuilder:validation:Minimum=0
	ConsecutiveErrorLimit *int32 `json:"consecutiveErrorLimit,omitempty"`
}

// MetricProvider is where a metric is measured: exactly one field.
//
// +kubebuilder:validation:XValidation:rule=`(has(self.prometheus) ? 1 : 0) + (has(self.web) ? 1 : 0) + (has(self.job) ? 1 : 0) == 1`,message="set exactly one provider: prometheus, web or job"
type MetricProvider struct {
	// Prometheus answers an instant query, or a range query.
	// +optional
	Prometheus *PrometheusMetric `json:"prometheus,omitempty"`
	// Web is a URL that answers JSON.
	// +optional
	Web *WebMetric `json:"web,omitempty"`
	// Job runs a Job per measurement (an AppRollout's analysis only).
	// +optional
	Job *JobMetric `json:"job,omitempty"`
}

// JobMetric is Argo Rollouts' job provider, in short: a Job per
// measurement in the rollout's namespace, created as its ServiceAccount,
// whose container's exit code is result. Without conditions, 0 is
// successful and anything else failed. A measurement takes as long as
// its Job: the rollout goes on meanwhile, and the Job is looked at again
// at each reconcile.
type JobMetric struct {
	// Image of the Job's one container.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// +optional
	Command []string `json:"command,omitempty"`
	// +optional
	Args []string `json:"args,omitempty"`
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Timeout is how long the Job may run (its activeDeadlineSeconds;
	// default 5m): past it the measurement is an error.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// WebMetric is a URL whose JSON answer is measured (Argo Rollouts' web
// provider): result is the value JSONPath selects, or the whole answer;
// or, with statusCode, the answer's HTTP status.
type WebMetric struct {
	// URL to GET, http(s); the controller asks it from where it runs.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url"`
	// JSONPath selects the value judged, in kubectl's JSONPath syntax
	// ({.data.errorRate}); absent: the whole answer.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	JSONPath string `json:"jsonPath,omitempty"`
	// Timeout of one request (default 30s).
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// StatusCode makes result the answer's HTTP status code (a number),
	// whatever its body: a health URL judged by its status. Without
	// conditions, 2xx is successful and any other status failed.
	// +optional
	StatusCode bool `json:"statusCode,omitempty"`
}

// PrometheusMetric is a PromQL query and the server that answers it.
type PrometheusMetric struct {
	// Address of the Prometheus server's HTTP API, such as
	// http://prometheus.monitoring:9090. The controller asks it from
	// where it runs.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	Address string `json:"address"`
	// Query in PromQL.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Query string `json:"query"`
	// Timeout of one query (default 30s).
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// RangeQuery asks the query over a span that ends now: result is then
	// a list of series, each a list of numbers.
	// +optional
	RangeQuery *RangeQuery `json:"rangeQuery,omitempty"`
}

// RangeQuery is the span and resolution of a range query.
type RangeQuery struct {
	// Span back from now that the query covers, such as 5m.
	Span metav1.Duration `json:"span"`
	// Step between two points (default a tenth of the span).
	// +optional
	Step *metav1.Duration `json:"step,omitempty"`
}

// Defaults of a Metric's limits, as Argo Rollouts has them.
const (
	DefaultFailureLimit          = 0
	DefaultInconclusiveLimit     = 0
	DefaultConsecutiveErrorLimit = 4
)

// AnalysisPhase is where a measurement, a metric or an analysis stands.
type AnalysisPhase string

const (
	AnalysisPending      AnalysisPhase = "Pending"
	AnalysisRunning      AnalysisPhase = "Running"
	AnalysisSuccessful   AnalysisPhase = "Successful"
	AnalysisFailed       AnalysisPhase = "Failed"
	AnalysisInconclusive AnalysisPhase = "Inconclusive"
	// AnalysisError: the measurement could not be taken (a measurement),
	// or too many in a row could not (a metric, which counts as failed).
	AnalysisError AnalysisPhase = "Error"
)

// Completed tells whether the phase is final.
func (p AnalysisPhase) Completed() bool {
	switch p {
	case AnalysisSuccessful, AnalysisFailed, AnalysisInconclusive, AnalysisError:
		return true
	}
	return false
}

// Measurement is one measurement of a metric: its value, when, and the
// verdict on it.
type Measurement struct {
	Phase AnalysisPhase `json:"phase"`
	// Value as measured, in short ("0.02", "[0.01 0.03]"); empty when
	// none was taken.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Value string `json:"value,omitempty"`
	// Message says why a measurement is an error or inconclusive.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string      `json:"message,omitempty"`
	TakenAt metav1.Time `json:"takenAt"`
}

// MetricResult is what a metric's measurements came to: its phase, the
// counts of each verdict and the last measurements (a bounded list: the
// counts, not the list, judge the metric).
type MetricResult struct {
	Name  string        `json:"name"`
	Phase AnalysisPhase `json:"phase"`
	// Count of measurements taken, errors included.
	Count        int32 `json:"count,omitempty"`
	Successful   int32 `json:"successful,omitempty"`
	Failed       int32 `json:"failed,omitempty"`
	Inconclusive int32 `json:"inconclusive,omitempty"`
	Error        int32 `json:"error,omitempty"`
	// ConsecutiveError counts the errors since the last measurement taken.
	ConsecutiveError int32 `json:"consecutiveError,omitempty"`
	// Measurements are the last ones, newest last.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Measurements []Measurement `json:"measurements,omitempty"`
	// Message says why the metric ended as it did.
	// +optional
	Message string `json:"message,omitempty"`
}
