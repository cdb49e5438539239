package apps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis"
	"github.com/upshift-dev/upshift/internal/egress"
)

// measured is what the due metrics gave at a reconcile: the measurements
// taken, and the metrics whose measurement is under way (a Job runs),
// which Decide looks at again after Poll.
type measured struct {
	taken   map[string]v1alpha1.Measurement
	pending map[string]bool
}

// measure takes the due metrics' measurements at now, as the analysis
// gate does: providers keep to policy, a condition that does not compile
// (the spec changed mid-rollout) is a measurement in error. A Job metric
// runs its measurement's Job as the rollout's ServiceAccount (kube).
func measure(ctx context.Context, app *v1alpha1.AppRollout, due []v1alpha1.Metric, policy egress.Policy, kube kubernetes.Interface, now time.Time) measured {
	var out measured
	for _, m := range due {
		conds, errs := analysis.Compile(m, field.NewPath("metric"))
		var p analysis.Provider
		var err error
		if m.Provider.Job != nil {
			p = analysis.NewJob(*m.Provider.Job, measurementJob(app, m.Name, kube))
		} else {
			p, err = analysis.NewProvider(m, policy)
		}
		var meas v1alpha1.Measurement
		taken := true
		switch {
		case len(errs) > 0:
			meas = analysis.ErrorMeasurement(now, errs.ToAggregate().Error())
		case err != nil:
			meas = analysis.ErrorMeasurement(now, err.Error())
		default:
			meas, taken = analysis.Measure(ctx, p, conds, now)
		}
		if !taken {
			if out.pending == nil {
				out.pending = map[string]bool{}
			}
			out.pending[m.Name] = true
			continue
		}
		if out.taken == nil {
			out.taken = map[string]v1alpha1.Measurement{}
		}
		out.taken[m.Name] = meas
	}
	return out
}

// measurementJob is where a Job metric's next measurement runs: a Job
// named for the rollout, the metric and the measurement's number, with a
// hash of the attempt and the analysis (kind and start), so a measurement
// asked again finds its Job and the next one, or a later analysis, its
// own.
func measurementJob(app *v1alpha1.AppRollout, metric string, kube kubernetes.Interface) analysis.JobRun {
	an := app.Status.Analysis
	var kind string
	var started time.Time
	var count int32
	if an != nil {
		kind, started, count = an.Kind, an.StartedAt.Time, resultOf(an, metric).Count
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d/%s/%d/%s/%d", app.UID, app.Status.Attempt, kind, started.Unix(), metric, count))
	label := dnsLabel(metric)
	label = strings.Trim(label[:min(len(label), 20)], "-")
	tail := fmt.Sprintf("%s-%d-%s", label, count+1, hex.EncodeToString(sum[:])[:8])
	head := strings.TrimRight(app.Name[:min(len(app.Name), maxName-len(tail)-1)], "-.")
	name := head + "-" + tail
	labels := map[string]string{"app": app.Name, "type": "analysis", LabelRollout: app.Name}
	return analysis.JobRun{Client: kube, Namespace: app.Namespace, Name: name, Labels: labels,
		Annotations: map[string]string{AnnotationAttempt: attemptMark(app, app.Status.Attempt)}, Owners: ownedBy(app)}
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// dnsLabel writes a metric's name as a name's part: lower case, other
// characters as '-'.
func dnsLabel(s string) string {
	return strings.Trim(notDNS.ReplaceAllString(strings.ToLower(s), "-"), "-")
}
