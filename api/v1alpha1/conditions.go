package v1alpha1

// Condition types of an UpgradePlan. Ready is always present; the others
// only while True (kstatus's abnormal-true polarity: absent means False).
const (
	// ConditionReady is True once the run reached the plan's version.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the run moves: pending, running,
	// waiting for an approval or a pause, rolling back.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the run stopped and only a person can
	// move it on: it failed without rollback, was rolled back, its
	// rollback failed, or it was aborted.
	ConditionStalled = "Stalled"
	// ConditionRolledBack is True when the run failed and every stage it
	// changed was restored and verified.
	ConditionRolledBack = "RolledBack"
	// ConditionWaitingForApproval is True while the run waits at an
	// approval step.
	ConditionWaitingForApproval = "WaitingForApproval"
)

// Reasons of the conditions above: the run's phase, or what it waits for.
const (
	ReasonPending            = "Pending"
	ReasonRunning            = "Running"
	ReasonWaitingForApproval = "WaitingForApproval"
	ReasonRollingBack        = "RollingBack"
	ReasonSucceeded          = "Succeeded"
	ReasonFailed             = "Failed"
	ReasonRolledBack         = "RolledBack"
	ReasonRollbackFailed     = "RollbackFailed"
	ReasonAborted            = "Aborted"
)
