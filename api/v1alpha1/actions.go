package v1alpha1

// Operator actions on an UpgradePlan run by the controller, requested with
// annotations (`kubectl annotate upgradeplan NAME upshift.dev/abort=$(date +%s)`).
//
// Annotations, not spec fields: an action is a one-time request, not a
// desired state. Writing it does not bump metadata.generation (so
// observedGeneration keeps meaning "the spec I acted on"), a GitOps tool
// that owns the spec does not revert or replay it, and it needs only
// `patch` on the plan. The controller acts on a value once and records it
// in status.handledActions; writing a new value asks again (Flux's
// reconcile.fluxcd.io/requestedAt works the same way).
const (
	// AnnotationApprove approves an approval step. The value is the step's
	// name, optionally followed by "@" and any token to approve a step of
	// the same name again in a later attempt ("wait-for-ok@2").
	AnnotationApprove = "upshift.dev/approve"
	// AnnotationAbort stops the run where it is; backups stay and a
	// rollback is still possible. Any new value asks.
	AnnotationAbort = "upshift.dev/abort"
	// AnnotationRollback undoes every stage the run changed (a run that
	// failed without rollback, or was aborted). Any new value asks.
	AnnotationRollback = "upshift.dev/rollback"
	// AnnotationRetry starts a rolled-back run over with fresh backups,
	// retries the failed step of a run that failed without rollback, or
	// resumes an aborted run. Any new value asks.
	AnnotationRetry = "upshift.dev/retry"
)

// FinalizerRun holds a plan's deletion until its run is at a saved point
// that needs nobody: aborted if it was moving (its freezes lifted, the
// lease released). The run record stays. A PlatformUpgrade's holds for
// its hops, a ClusterVersion's for its member runs.
const FinalizerRun = "upshift.dev/run"

// ActionAnnotations lists the action annotations in the order the
// controller handles them when several are new at once.
var ActionAnnotations = []string{AnnotationApprove, AnnotationAbort, AnnotationRollback, AnnotationRetry}

// Reasons the controller gives when it cannot move a plan's run.
const (
	// ReasonSuspended: spec.suspend is true; the run stays where it is.
	ReasonSuspended = "Suspended"
	// ReasonInvalid: the plan cannot run in the cluster (a file path as a
	// source, or another problem the API server's validation cannot see).
	ReasonInvalid = "InvalidPlan"
	// ReasonPreflightFailed: the cluster or the plan's ServiceAccount
	// cannot do what the plan needs; nothing was changed.
	ReasonPreflightFailed = "PreflightFailed"
	// ReasonRefused: the run would not start or resume (the plan changed
	// since its run started, or another run is unfinished).
	ReasonRefused = "Refused"
	// ReasonQueued: another run holds the cluster; this one starts after.
	ReasonQueued = "Queued"
	// ReasonUnavailable: the API server or the run's record could not be
	// reached; the controller tries again.
	ReasonUnavailable = "Unavailable"
	// ReasonWaitingForWindow: the next stage (or an app's next step) may
	// start only inside one of spec.windows; it starts when one opens.
	ReasonWaitingForWindow = "WaitingForWindow"
)
