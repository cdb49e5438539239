package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/gates"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/step"
)

// DefaultCheckTimeout bounds a check whose plan sets no timeout: the
// cluster is looked at as it is, not waited for as a gate waits for a
// stage to settle.
const DefaultCheckTimeout = 30 * time.Second

// ErrChecksFailed: a blocking check of spec.checks failed; the run did
// not start and nothing changed. It wraps ErrRefused, and a driver may
// try again later (a node becomes Ready).
var ErrChecksFailed = fmt.Errorf("%w: the cluster's health checks failed", ErrRefused)

// CheckResult is one check of spec.checks as it ran.
type CheckResult struct {
	// Index is its place in spec.checks, Name its gate's name.
	Index    int
	Name     string
	Severity v1alpha1.Severity
	Passed   bool
	Message  string
	Status   v1alpha1.StepStatus
}

// Checks runs the plan's spec.checks once each, all of them (so every
// problem is told at once), and returns every result; it changes
// nothing. An error is a check that could not run at all.
func (s *Session) Checks(ctx context.Context, p *resolve.Plan) ([]CheckResult, error) {
	var out []CheckResult
	for i, g := range p.Plan.Spec.Checks {
		name := engine.GateName(g, i)
		start := metav1.NowMicro()
		res, err := runCheck(ctx, g, s.deps)
		if err != nil {
			return nil, fmt.Errorf("spec.checks[%d] (%s): %w", i, name, err)
		}
		end := metav1.NowMicro()
		c := CheckResult{Index: i, Name: name, Severity: g.Severity, Passed: res.Status == step.Succeeded, Message: res.Message,
			Status: v1alpha1.StepStatus{Name: name, Phase: v1alpha1.PhaseSucceeded, StartedAt: &start, FinishedAt: &end, Message: res.Message}}
		if c.Severity == "" {
			c.Severity = v1alpha1.SeverityBlocking
		}
		if !c.Passed {
			c.Status.Phase = v1alpha1.PhaseWarned
		}
		out = append(out, c)
	}
	return out, nil
}

// checks runs the plan's spec.checks and returns their results for the
// run's record. Warning and info failures go to Notice; blocking ones
// make the error.
func (s *Session) checks(ctx context.Context, p *resolve.Plan) ([]v1alpha1.StepStatus, error) {
	results, err := s.Checks(ctx, p)
	if err != nil {
		return nil, err
	}
	var blocking []string
	var statuses []v1alpha1.StepStatus
	for _, c := range results {
		statuses = append(statuses, c.Status)
		if c.Passed {
			continue
		}
		line := fmt.Sprintf("spec.checks[%d] %s: %s", c.Index, c.Name, c.Message)
		switch c.Severity {
		case v1alpha1.SeverityWarning, v1alpha1.SeverityInfo:
			s.opts.Notice(redact.Text(fmt.Sprintf("%s (%s): the run goes on", line, c.Severity)))
		default:
			blocking = append(blocking, line)
		}
	}
	if len(blocking) > 0 {
		return nil, fmt.Errorf("%w before any change, nothing was changed:\n  %s", ErrChecksFailed, redact.Text(strings.Join(blocking, "\n  ")))
	}
	return statuses, nil
}

func runCheck(ctx context.Context, g v1alpha1.Gate, deps *clients.Set) (step.Result, error) {
	check, err := gates.New(g, durationOr(g.Timeout, DefaultCheckTimeout), deps, nil) // a check has no backup (validation refuses envKept)
	if err != nil {
		return step.Result{}, err
	}
	return check.Check(ctx)
}
