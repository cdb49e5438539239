package engine

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// ApprovalStep is one approval step of a run and where it stands.
type ApprovalStep struct {
	Name  string
	Stage string
	Phase v1alpha1.Phase
	// Approval is who approved it, if anyone did.
	Approval *v1alpha1.Approval
}

// Waiting reports whether the run waits at the step now.
func (s ApprovalStep) Waiting() bool { return s.Phase == v1alpha1.PhaseRunning }

// ApprovalSteps lists the run's approval steps in plan order.
func ApprovalSteps(r *v1alpha1.UpgradeRun) []ApprovalStep {
	var out []ApprovalStep
	for i, st := range r.Spec.Plan.Stages {
		for j, s := range st.Steps {
			if s.Approval == nil {
				continue
			}
			as := ApprovalStep{Name: s.Name, Stage: st.Name, Phase: v1alpha1.PhasePending}
			if i < len(r.Status.Stages) && j < len(r.Status.Stages[i].Steps) {
				as.Phase = r.Status.Stages[i].Steps[j].Phase
			}
			as.Approval, _ = Approved(r, s.Name)
			out = append(out, as)
		}
	}
	return out
}

// Approved reports who approved the step, if anyone did.
func Approved(r *v1alpha1.UpgradeRun, step string) (*v1alpha1.Approval, bool) {
	for i := range r.Status.Approvals {
		if r.Status.Approvals[i].Step == step {
			return &r.Status.Approvals[i], true
		}
	}
	return nil, false
}

// Approval is what Approve recorded.
type Approval struct {
	Step string
	// Ahead: the run does not wait at the step yet; it is approved ahead
	// of time and the run will not stop there.
	Ahead bool
}

// ApprovalRefusal says why Approve refused.
type ApprovalRefusal string

const (
	// NotWaiting: no step was named and the run waits at no approval step.
	NotWaiting ApprovalRefusal = "not-waiting"
	// SeveralWaiting: no step was named and the run waits at more than
	// one (side by side in a graph stage).
	SeveralWaiting ApprovalRefusal = "several-waiting"
	// NoSuchApproval: the named step is not an approval step of the run.
	NoSuchApproval ApprovalRefusal = "no-such-step"
	// AlreadyPassed: the step already succeeded.
	AlreadyPassed ApprovalRefusal = "already-passed"
	// AlreadyApproved: the step is approved and not passed yet.
	AlreadyApproved ApprovalRefusal = "already-approved"
	// RunOver: the run succeeded or rolls back (or did): no approval step
	// of this attempt will run.
	RunOver ApprovalRefusal = "run-over"
)

// ApprovalRefused is Approve's refusal: why, and the run's approval steps,
// as data a driver renders with its own hint (the CLI names its --step
// flag, a web UI its buttons). It wraps ErrNotAllowed.
type ApprovalRefused struct {
	Run    string
	Phase  v1alpha1.RunPhase
	Step   string // the step the refusal is about; "" when none was named or found
	Reason ApprovalRefusal
	Steps  []ApprovalStep // every approval step of the run
}

func (e *ApprovalRefused) Unwrap() error { return ErrNotAllowed }

func (e *ApprovalRefused) Error() string {
	switch e.Reason {
	case RunOver:
		msg := fmt.Sprintf("run %s is %s: no approval step of it will run", e.Run, e.Phase)
		if e.Phase == v1alpha1.RunRolledBack {
			msg += "; a new attempt asks for every approval again"
		}
		return msg
	case SeveralWaiting:
		var names []string
		for _, s := range e.Steps {
			if s.Waiting() && s.Approval == nil {
				names = append(names, s.Name)
			}
		}
		return fmt.Sprintf("run %s waits at %d approval steps (%s): name the one to approve", e.Run, len(names), strings.Join(names, ", "))
	case NoSuchApproval:
		return fmt.Sprintf("run %s has no approval step %q (%s)", e.Run, e.Step, describeApprovals(e.Steps))
	case AlreadyPassed:
		return fmt.Sprintf("step %s of run %s already passed%s", e.Step, e.Run, approvedBy("approved by", e.find()))
	case AlreadyApproved:
		return fmt.Sprintf("step %s of run %s is already approved%s", e.Step, e.Run, approvedBy("by", e.find()))
	}
	return fmt.Sprintf("run %s waits at no approval step (%s)", e.Run, describeApprovals(e.Steps))
}

func (e *ApprovalRefused) find() ApprovalStep {
	for _, s := range e.Steps {
		if s.Name == e.Step {
			return s
		}
	}
	return ApprovalStep{}
}

func approvedBy(prefix string, s ApprovalStep) string {
	if s.Approval == nil {
		return ""
	}
	return fmt.Sprintf(" (%s %s at %s)", prefix, s.Approval.By, s.Approval.At.UTC().Format(time.RFC3339))
}

// describeApprovals lists approval steps with their stage and phase.
func describeApprovals(steps []ApprovalStep) string {
	if len(steps) == 0 {
		return "it has no approval steps"
	}
	var parts []string
	for _, s := range steps {
		p := fmt.Sprintf("%s in stage %s: %s", s.Name, s.Stage, s.Phase)
		if s.Approval != nil && s.Phase != v1alpha1.PhaseSucceeded {
			p += ", approved"
		}
		parts = append(parts, p)
	}
	return "approval steps: " + strings.Join(parts, "; ")
}

// Approve records an operator's approval. Without a step name it approves
// the approval step the run waits at now, and only that one: an approval
// further on is never given by accident. A named step may be one the run
// waits at, or one it has not reached yet (approved ahead: the run will
// not stop there). A step that passed or is approved already is refused,
// as is any approval of a run that succeeded or rolls back.
func Approve(r *v1alpha1.UpgradeRun, step, by string, now time.Time) (Approval, error) {
	steps := ApprovalSteps(r)
	refuse := func(reason ApprovalRefusal, name string) (Approval, error) {
		return Approval{}, &ApprovalRefused{Run: r.Name, Phase: r.Status.Phase, Step: name, Reason: reason, Steps: steps}
	}
	if approvalsOver(r) {
		return refuse(RunOver, step)
	}
	var target *ApprovalStep
	if step == "" {
		var waiting, approved []*ApprovalStep
		for i := range steps {
			switch {
			case !steps[i].Waiting():
			case steps[i].Approval != nil:
				approved = append(approved, &steps[i])
			default:
				waiting = append(waiting, &steps[i])
			}
		}
		switch {
		case len(waiting) > 1:
			return refuse(SeveralWaiting, "")
		case len(waiting) == 1:
			target = waiting[0]
		case len(approved) > 0:
			return refuse(AlreadyApproved, approved[0].Name)
		default:
			return refuse(NotWaiting, "")
		}
	} else {
		for i := range steps {
			if steps[i].Name == step {
				target = &steps[i]
			}
		}
		switch {
		case target == nil:
			return refuse(NoSuchApproval, step)
		case target.Phase == v1alpha1.PhaseSucceeded:
			return refuse(AlreadyPassed, step)
		case target.Approval != nil:
			return refuse(AlreadyApproved, step)
		}
	}
	r.Status.Approvals = append(r.Status.Approvals, v1alpha1.Approval{Step: target.Name, By: by, At: metav1.NewMicroTime(now)})
	return Approval{Step: target.Name, Ahead: !target.Waiting()}, nil
}

// approvalsOver: no approval step of the run's attempt will run again.
func approvalsOver(r *v1alpha1.UpgradeRun) bool {
	st := r.Status
	switch st.Phase {
	case v1alpha1.RunSucceeded, v1alpha1.RunRolledBack, v1alpha1.RunRollingBack, v1alpha1.RunRollbackFailed:
		return true
	case v1alpha1.RunAborted:
		return st.RollbackRequested
	}
	return false
}
