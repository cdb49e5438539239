// Package conditions computes the status an UpgradePlan and an UpgradeRun
// show of a run: the kstatus conditions (Ready, Reconciling, Stalled),
// which make `kubectl wait --for=condition=Ready` and GitOps tools read
// them right, the domain conditions (RolledBack, WaitingForApproval), and
// a plan's printer-column fields. Both kinds share the conditions ([Set]):
// [SetPlanStatus] for a plan (the controller writes it), [SetRunStatus]
// for a run (the run store sets it on every save). Pure functions of the
// run, the generation and the time; tests need no cluster.
package conditions
