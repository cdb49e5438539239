package apps

import (
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A service group is a chain of rollouts, each naming the one before it
// in spec.after. Each decides from its own status and its neighbours':
// it starts once the one before is Healthy at its version; it rolls back
// once one after it was rolled back, so a failure at the end undoes the
// group newest first, each rollout with its own down-migration.

// healthyAt tells whether a rollout is Healthy at its spec.version.
func healthyAt(a *v1alpha1.AppRollout) bool {
	return a != nil && a.Status.Phase == v1alpha1.AppHealthy && a.Status.CurrentVersion == a.Spec.Version
}

// waitForBefore says why a rollout of a group may not start yet ("" when
// it may).
func waitForBefore(app, before *v1alpha1.AppRollout) string {
	switch {
	case app.Spec.After == "":
		return ""
	case before == nil:
		return fmt.Sprintf("approllout %s (spec.after) not found: create it, or remove spec.after", app.Spec.After)
	case !healthyAt(before):
		phase := string(before.Status.Phase)
		if phase == "" {
			phase = "not started"
		}
		return fmt.Sprintf("waits for approllout %s, before it in its group, to be Healthy at %s (it is %s)", before.Name, before.Spec.Version, phase)
	}
	return ""
}

// rolledBackAfter is the rollout after this one in its group that was
// rolled back in an attempt begun after this one became Healthy: this
// one must roll back too. Nil when there is none, or nothing to restore.
func rolledBackAfter(st *v1alpha1.AppRolloutStatus, next []*v1alpha1.AppRollout) *v1alpha1.AppRollout {
	if st.Phase != v1alpha1.AppHealthy || st.Backup == nil || st.PhaseStartedAt == nil {
		return nil
	}
	for _, n := range next {
		ns := n.Status
		if ns.Phase == v1alpha1.AppRolledBack && ns.Backup != nil && ns.Backup.CreatedAt != nil && !ns.Backup.CreatedAt.Before(st.PhaseStartedAt) {
			return n
		}
	}
	return nil
}

// recovered tells whether a rollout rolled back for its group may start
// again: the one before it is Healthy again, since after this rollback.
func recovered(app, before *v1alpha1.AppRollout) bool {
	st := app.Status
	return st.Phase == v1alpha1.AppRolledBack && st.Rollback != nil && st.Rollback.Group && healthyAt(before) &&
		before.Status.PhaseStartedAt != nil && st.PhaseStartedAt != nil && before.Status.PhaseStartedAt.After(st.PhaseStartedAt.Time)
}

// group moves a rollout for its group, before its own phase is decided:
// a rollback for the one after it, or a start again after one.
func (x *decider) group() (Decision, bool) {
	if n := rolledBackAfter(x.st, x.o.Next); n != nil {
		d := x.fail(fmt.Sprintf("approllout %s, after this one in its group, was rolled back (%s)", n.Name, n.Status.Rollback.Reason))
		x.st.Rollback.Group = true
		return d, true
	}
	if recovered(x.app, x.o.Before) {
		x.event(false, "GroupRetried", fmt.Sprintf("approllout %s before it is Healthy again: starting again", x.o.Before.Name))
		return x.start(), true
	}
	return Decision{}, false
}
