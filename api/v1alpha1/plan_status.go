package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// UpgradePlanStatus is what the controller observed of a plan and its run.
// Decide from the conditions (kstatus: Ready, Reconciling, Stalled); phase,
// stage and step are for display.
type UpgradePlanStatus struct {
	// ObservedGeneration is the plan's metadata.generation this status
	// describes: until it equals the plan's, the status is stale.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (the run reached the version), Reconciling
	// (present while the run moves), Stalled (present when the run
	// stopped and a person must act), RolledBack and WaitingForApproval.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// Phase is the run's phase, for display only.
	// +optional
	Phase RunPhase `json:"phase,omitempty"`
	// Version is the version the run reached, or is reaching.
	// +optional
	Version string `json:"version,omitempty"`
	// Stage and Step are where the run is, or where it stopped (a step or
	// a gate); empty once it succeeded.
	// +optional
	Stage string `json:"stage,omitempty"`
	// +optional
	Step string `json:"step,omitempty"`
	// Run names the run that records the plan's execution, kept in the
	// controller's namespace (upshift-system by default) with the CLI's
	// runs: `upshift status RUN` shows it. It is `<namespace>.<name>`
	// of the plan: a same-named plan in another namespace has its own.
	// +optional
	Run string `json:"run,omitempty"`
	// RunUID is the run's UID: with ObservedGeneration, the plan's
	// outcome, kept when the run is pruned (a finished plan is not
	// applied again at the same generation).
	// +optional
	RunUID string `json:"runUID,omitempty"`
	// HandledActions maps each action annotation (upshift.dev/approve,
	// abort, rollback, retry) to the value the controller last acted on.
	// +optional
	HandledActions map[string]string `json:"handledActions,omitempty"`
}
