// Package autopilot is the autopilot step kind: k0s upgraded on every
// node by k0s autopilot, the way embedded-cluster drives it.
//
// The step writes autopilot's Plan (autopilot.k0sproject.io/v1beta2,
// cluster-scoped, always named "autopilot", so there is never a second
// one) with one command: k0supdate, its controllers the nodes labelled
// node-role.kubernetes.io/control-plane and its workers the others, or
// airgapupdate to every node. It then reads the Plan each time it is
// asked (a Running result, so no goroutine waits out an upgrade of an
// hour) until autopilot ends it:
//
//   - Completed: the step waits until every node's kubelet reports the
//     version, deletes the Plan and succeeds;
//   - IncompleteTargets, Restricted, Warning, ApplyFailed, or any other
//     end: the step fails with embedded-cluster's message for the state
//     and the targets that failed.
//
// A Plan carries the run, attempt and step that wrote it (an
// annotation): a resumed or restarted driver finds its own Plan by name
// and goes on watching it. Another upgrade's Plan still in progress is
// waited for; one that ended is deleted and ours written, as
// embedded-cluster does. When every node runs the version already,
// nothing is written.
//
// A rollback deletes the Plan (the stage's backup holds it absent). It
// cannot move k0s back: autopilot does not downgrade, so the Reverter
// names the nodes left on the new version instead of pretending.
package autopilot
