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

// checks runs the plan's spec.checks once, all of them (so every problem
// is told at once), and returns their results for the run's record.
// Warning and info failures go to Notice; blocking ones make the error.
func (s *Session) checks(ctx context.Context, p *Resolved) ([]v1alpha1.StepStatus, error) {
	var blocking []string
	var results []v1alpha1.StepStatus
	for i, g := range p.Plan.Spec.Checks {
		name := engine.GateName(g, i)
		start := metav1.NowMicro()
		res, err := runCheck(ctx, g, s.deps)
		if err != nil {
			return nil, fmt.Errorf("spec.checks[%d] (%s): %w", i, name, err)
		}
		end := metav1.NowMicro()
		st := v1alpha1.StepStatus{Name: name, Phase: v1alpha1.PhaseSucceeded, StartedAt: &start, FinishedAt: &end, Message: res.Message}
		if res.Outcome != step.Succeeded {
			st.Phase = v1alpha1.PhaseWarned
		}
		results = append(results, st)
		if res.Outcome == step.Succeeded {
			continue
		}
		line := fmt.Sprintf("spec.checks[%d] %s: %s", i, name, res.Message)
		switch g.Severity {
		case v1alpha1.SeverityWarning, v1alpha1.SeverityInfo:
			s.opts.Notice(redact.Text(fmt.Sprintf("%s (%s): the run goes on", line, g.Severity)))
		default:
			blocking = append(blocking, line)
		}
	}
	if len(blocking) > 0 {
		return nil, fmt.Errorf("%w before any change, nothing was changed:\n  %s", ErrChecksFailed, redact.Text(strings.Join(blocking, "\n  ")))
	}
	return results, nil
}

func runCheck(ctx context.Context, g v1alpha1.Gate, deps *clients.Set) (step.Result, error) {
	check, err := gates.New(g, durationOr(g.Timeout, DefaultCheckTimeout), deps, nil) // a check has no backup (validation refuses envKept)
	if err != nil {
		return step.Result{}, err
	}
	return check.Check(ctx)
}
