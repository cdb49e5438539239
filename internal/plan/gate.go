package plan

import (
	"fmt"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis"
	"github.com/upshift-dev/upshift/internal/redact"
)

// defaultGateTimeout is Gate.Timeout's documented default ("Default 2m").
// The runner owns the value it uses (runner.DefaultGateTimeout) but
// imports this package, so the documented value is mirrored here.
const defaultGateTimeout = 2 * time.Minute

const selectorHint = "a selector is label requirements separated by commas, e.g. app=web,tier!=db or tier in (web,api)"

func validateGate(path *field.Path, g v1alpha1.Gate) field.ErrorList {
	errs := positive(path.Child("timeout"), g.Timeout)
	set := 0
	if r := g.Ready; r != nil {
		set++
		errs = append(errs, validateReadyGate(path.Child("ready"), r)...)
	}
	if h := g.HTTP; h != nil {
		set++
		errs = append(errs, validateHTTPGate(path, h, g.Timeout)...)
	}
	if p := g.PodsRunning; p != nil {
		set++
		errs = append(errs, validatePodsRunningGate(path.Child("podsRunning"), p)...)
	}
	if p := g.PVCsBound; p != nil {
		set++
		errs = append(errs, validatePVCsBoundGate(path.Child("pvcsBound"), p)...)
	}
	if n := g.NodesReady; n != nil {
		set++
		errs = append(errs, validateNodesReadyGate(path.Child("nodesReady"), n)...)
	}
	if h := g.HelmReleases; h != nil {
		set++
		for i, n := range h.Names {
			if n == "" {
				errs = append(errs, field.Required(path.Child("helmReleases", "names").Index(i), "a release's name"))
			}
		}
	}
	if e := g.EnvKept; e != nil {
		set++
		errs = append(errs, validateEnvKeptGate(path.Child("envKept"), e)...)
	}
	if sk := g.Soak; sk != nil {
		set++
		if sk.Duration.Duration <= 0 {
			errs = append(errs, field.Required(path.Child("soak", "duration"), "how long to keep checking, e.g. 10m"))
		}
		errs = append(errs, positive(path.Child("soak", "interval"), sk.Interval)...)
	}
	if m := g.Metric; m != nil {
		set++
		errs = append(errs, validateMetricGate(path, m, g.Timeout)...)
	}
	switch g.Severity {
	case "", v1alpha1.SeverityBlocking, v1alpha1.SeverityWarning, v1alpha1.SeverityInfo:
	default:
		errs = append(errs, field.NotSupported(path.Child("severity"), g.Severity, []string{"blocking", "warning", "info"}))
	}
	if set != 1 {
		errs = append(errs, field.Invalid(path, fmt.Sprintf("%d gate kinds", set), "set exactly one gate kind: ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept, soak or metric"))
	}
	return errs
}

func validateReadyGate(path *field.Path, r *v1alpha1.ReadyGate) field.ErrorList {
	var errs field.ErrorList
	if r.APIVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), "e.g. apps/v1"))
	}
	if r.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), "e.g. Deployment"))
	}
	switch {
	case (r.Name == "") == (r.Selector == ""):
		errs = append(errs, field.Forbidden(path, "set exactly one of name or selector"))
	case r.Selector != "":
		if _, err := labels.Parse(r.Selector); err != nil {
			errs = append(errs, field.Invalid(path.Child("selector"), r.Selector, err.Error()+"; "+selectorHint))
		}
	}
	return errs
}

// validateHTTPGate checks the http gate at gatePath.http; gateTimeout is
// the enclosing gate's, which the http gate's own timeout overrides (as the
// http gate does when it runs).
func validateHTTPGate(gatePath *field.Path, h *v1alpha1.HTTPGate, gateTimeout *metav1.Duration) field.ErrorList {
	path := gatePath.Child("http")
	var errs field.ErrorList
	if u, err := url.Parse(h.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, field.Invalid(path.Child("url"), redact.URL(h.URL), "must be an absolute http(s) URL"))
	}
	if h.ExpectStatus != 0 && (h.ExpectStatus < 100 || h.ExpectStatus > 599) {
		errs = append(errs, field.Invalid(path.Child("expectStatus"), h.ExpectStatus, "must be an HTTP status code (100-599)"))
	}
	errs = append(errs, positive(path.Child("timeout"), h.Timeout)...)
	errs = append(errs, positive(path.Child("interval"), h.Interval)...)
	if h.Interval == nil || h.Interval.Duration <= 0 {
		return errs
	}
	// An interval longer than the time the gate has means one request and
	// a failure: the gate never gets a second look.
	timeout, from := defaultGateTimeout, "the default"
	switch {
	case h.Timeout != nil:
		timeout, from = h.Timeout.Duration, path.Child("timeout").String()
	case gateTimeout != nil:
		timeout, from = gateTimeout.Duration, gatePath.Child("timeout").String()
	}
	if timeout > 0 && h.Interval.Duration > timeout { // a non-positive timeout is reported above
		errs = append(errs, field.Invalid(path.Child("interval"), h.Interval.Duration.String(),
			fmt.Sprintf("must not exceed the gate's timeout (%s, %s): the gate would make one request and fail; shorten the interval or lengthen the timeout", timeout, from)))
	}
	return errs
}

// validateMetricGate checks a metric gate at gatePath.metric: the metric
// (analysis.Validate), and that it ends within the gate's timeout: a
// metric measured until stopped never would, and one whose measurements
// take longer than the timeout always fails.
func validateMetricGate(gatePath *field.Path, m *v1alpha1.Metric, gateTimeout *metav1.Duration) field.ErrorList {
	path := gatePath.Child("metric")
	errs := analysis.Validate(*m, path)
	if (m.Count == nil || *m.Count == 0) && m.Interval != nil {
		return append(errs, field.Required(path.Child("count"), "a gate's metric must end: set how many measurements pass it, e.g. 5"))
	}
	timeout, from := defaultGateTimeout, "the default"
	if gateTimeout != nil {
		timeout, from = gateTimeout.Duration, gatePath.Child("timeout").String()
	}
	if need := analysis.Expected(*m); need >= timeout {
		errs = append(errs, field.Invalid(gatePath.Child("timeout"), timeout.String(),
			fmt.Sprintf("the metric's measurements take %s (initialDelay and count-1 intervals), not less than the gate's timeout (%s): set timeout above %s", need, from, need)))
	}
	return errs
}
