// Package conditions computes an UpgradePlan's status from the run it
// drives: the kstatus conditions (Ready, Reconciling, Stalled), which make
// `kubectl wait --for=condition=Ready` and GitOps tools read a plan right,
// the domain conditions (RolledBack, WaitingForApproval), and the fields
// shown as printer columns. Pure functions of the run, the plan's
// generation and the time: the controller calls them and writes the
// result; tests need no cluster.
package conditions
