package apps

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// fail ends the attempt: the failure is saved first (a controller killed
// after it rolls back all the same), and the rollback begins at once.
func (x *decider) fail(reason string) Decision {
	x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppFailed, &x.now
	x.st.PauseStartedAt = nil
	x.st.Rollback = &v1alpha1.AppRollback{Reason: reason}
	x.st.Message = "rolling back: " + reason
	x.event(true, "RolloutFailed", reason)
	return Decision{RequeueAfter: soon}
}

// rollingBack undoes a failed attempt, newest first: the Deployment put
// back as captured (the canary deleted), then the down-migration when the
// attempt's migration ran.
func (x *decider) rollingBack() Decision {
	rb := x.st.Rollback
	if rb == nil { // a Failed phase saved without one: nothing was recorded to undo
		rb = &v1alpha1.AppRollback{Reason: x.st.Message}
		x.st.Rollback = rb
	}
	if rb.Done {
		return Decision{}
	}
	if !rb.Restored {
		if x.st.Backup == nil {
			rb.Restored = true // failed before the capture: nothing was changed
		} else {
			x.st.Message = "rolling back: restoring deployment " + deploymentName(x.app) + " from its backup"
			return Decision{Action: Restore, RequeueAfter: soon}
		}
	}
	if len(rb.Differences) > 0 {
		return x.rollbackFailed()
	}
	if d, waiting := x.downMigration(); waiting {
		return d
	}
	if len(rb.Differences) > 0 {
		return x.rollbackFailed()
	}
	rb.Done = true
	x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppRolledBack, &x.now
	x.st.CanaryWeight, x.st.CanaryStep = 0, 0
	x.st.CanaryStepStartedAt = nil
	x.st.Message = fmt.Sprintf("rolled back to %s: %s", x.st.StableImage, rb.Reason)
	x.event(true, "RolledBack", x.st.Message)
	return Decision{}
}

// downMigration runs the attempt's down-migration after its migration
// ran; waiting is true while it does.
func (x *decider) downMigration() (d Decision, waiting bool) {
	rb := x.st.Rollback
	m := x.app.Spec.UpgradeStrategy.MigrationJob
	if x.st.MigrationJob == "" || m == nil || len(m.RollbackCommand) == 0 {
		return Decision{}, false
	}
	name := DownMigrationJobName(x.app, x.st.TargetVersion, x.st.Attempt)
	job := x.o.DownMigration
	if rb.DownMigrationJob == "" {
		if job != nil && !x.ours(job.Annotations) {
			rb.Differences = append(rb.Differences, fmt.Sprintf("job %s exists and this attempt did not create it (%s): the down-migration did not run", name, origin(job.Annotations)))
			return Decision{}, false
		}
		rb.DownMigrationJob = name
		x.st.Message = "rolling back: down-migration Job " + name + " runs"
		x.event(false, "DownMigrationStarted", "created down-migration Job "+name)
		return Decision{Action: CreateDownMigration, RequeueAfter: x.o.Poll}, true
	}
	if job == nil {
		rb.Differences = append(rb.Differences, fmt.Sprintf("down-migration Job %s is gone before it finished", name))
		return Decision{}, false
	}
	switch c := jobEnd(job); {
	case c == nil:
		if x.overdue(x.st.PhaseStartedAt) {
			rb.Differences = append(rb.Differences, fmt.Sprintf("down-migration Job %s did not finish within %s", name, x.deadline()))
			return Decision{}, false
		}
		return Decision{RequeueAfter: x.o.Poll}, true
	case c.Type == batchv1.JobFailed:
		rb.Differences = append(rb.Differences, fmt.Sprintf("down-migration Job %s failed: %s (kubectl logs -n %s job/%s)", name, c.Message, x.app.Namespace, name))
	}
	return Decision{}, false
}

// rollbackFailed stops: what did not come back needs a person.
func (x *decider) rollbackFailed() Decision {
	rb := x.st.Rollback
	rb.Done = true
	x.st.Message = fmt.Sprintf("rollback failed (%s): %s; fix it and annotate upshift.dev/retry to roll back again", strings.Join(rb.Differences, "; "), rb.Reason)
	x.event(true, "RollbackFailed", x.st.Message)
	return Decision{}
}
