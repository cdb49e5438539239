package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// AppPhase is where a rollout stands, with the ManagedApplication
// operator's names. For display: the conditions are what to decide on.
type AppPhase string

const (
	// AppPending: the rollout has not started (its Deployment is missing,
	// or it is being captured).
	AppPending AppPhase = "Pending"
	// AppMigrating: the migration Job runs.
	AppMigrating AppPhase = "Migrating"
	// AppDeploying: the new version is being brought in (canary steps).
	AppDeploying AppPhase = "Deploying"
	// AppHealthChecking: every replica runs the new version; the rollout
	// waits for them to be ready.
	AppHealthChecking AppPhase = "HealthChecking"
	// AppHealthy: the Deployment runs status.currentVersion, ready.
	AppHealthy AppPhase = "Healthy"
	// AppFailed: the rollout failed; it is being rolled back, or its
	// rollback failed (Stalled says which).
	AppFailed AppPhase = "Failed"
	// AppRolledBack: the rollout failed and the Deployment is back as it
	// was captured, verified (and the down-migration ran).
	AppRolledBack AppPhase = "RolledBack"
)

// Condition types an AppRollout has besides Ready, Reconciling and
// Stalled (present only while True).
const (
	// ConditionPaused is True while spec.paused holds the rollout.
	ConditionPaused = "Paused"
)

// AnnotationPromote ends the pause of the canary step the rollout is at
// (Argo Rollouts' promote). Any new value asks. An AppRollout also takes
// AnnotationAbort (fail and roll back) and AnnotationRetry (start a
// rolled-back version again, or try a failed rollback again).
const AnnotationPromote = "upshift.dev/promote"

// AppActionAnnotations lists an AppRollout's action annotations in the
// order the controller handles them when several are new at once.
var AppActionAnnotations = []string{AnnotationAbort, AnnotationRetry, AnnotationPromote}

// AppRolloutStatus is what the controller observed and did.
type AppRolloutStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (the Deployment runs spec.version, ready),
	// Reconciling (a rollout or its rollback moves), Stalled (a person
	// must act), Paused (spec.paused).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Phase AppPhase `json:"phase,omitempty"`
	// CurrentVersion is the version the Deployment ran when the rollout
	// began, and the target once the rollout succeeded.
	// +optional
	CurrentVersion string `json:"currentVersion,omitempty"`
	// TargetVersion is the version being rolled out (or last tried).
	// +optional
	TargetVersion string `json:"targetVersion,omitempty"`
	// CanaryWeight is the weight of the canary step the rollout is at.
	// +optional
	CanaryWeight int32 `json:"canaryWeight,omitempty"`
	// CanaryStep is the index of that step in
	// spec.upgradeStrategy.canary.steps.
	// +optional
	CanaryStep int32 `json:"canaryStep,omitempty"`
	// PhaseStartedAt is when the phase began (deadlines count from it).
	// +optional
	PhaseStartedAt *metav1.Time `json:"phaseStartedAt,omitempty"`
	// CanaryStepStartedAt is when the canary step's replicas were set.
	// +optional
	CanaryStepStartedAt *metav1.Time `json:"canaryStepStartedAt,omitempty"`
	// PauseStartedAt is when the canary step's pods were all ready, and
	// its pause began.
	// +optional
	PauseStartedAt *metav1.Time `json:"pauseStartedAt,omitempty"`
	// PausedAt is when spec.paused stopped the rollout; on resume every
	// time above moves on by the time paused.
	// +optional
	PausedAt *metav1.Time `json:"pausedAt,omitempty"`
	// NextWindow is when the rollout's next window opens, while it waits
	// for one.
	// +optional
	NextWindow *metav1.Time `json:"nextWindow,omitempty"`
	// Message says why the rollout is where it is.
	// +optional
	Message string `json:"message,omitempty"`
	// Attempt counts the rollouts started for the target version (a retry
	// starts the next); the Jobs and the backup of each are its own.
	// +optional
	Attempt int32 `json:"attempt,omitempty"`
	// StableImage is the image the Deployment's first container ran when
	// the rollout began.
	// +optional
	StableImage string `json:"stableImage,omitempty"`
	// Replicas is how many replicas the Deployment had when the rollout
	// began: a canary's weights are shares of it, and promotion restores
	// it.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Backup holds the Deployment as it was before the rollout changed
	// anything (and that the canary Deployment did not exist), in Secrets
	// of the rollout's namespace: what a rollback puts back and verifies.
	// +optional
	Backup *BackupRef `json:"backup,omitempty"`
	// MigrationJob names the migration Job this attempt created.
	// +optional
	MigrationJob string `json:"migrationJob,omitempty"`
	// Traffic holds a traffic-routed canary's Services' selectors as the
	// rollout found them: what they get back at the end.
	// +optional
	Traffic *AppTrafficStatus `json:"traffic,omitempty"`
	// BlueGreen is where a blue-green rollout stands.
	// +optional
	BlueGreen *AppBlueGreenStatus `json:"blueGreen,omitempty"`
	// Analysis is the analysis running or last run.
	// +optional
	Analysis *AppAnalysisStatus `json:"analysis,omitempty"`
	// Rollback is the rollback of the failed attempt, once it began.
	// +optional
	Rollback *AppRollback `json:"rollback,omitempty"`
	// HandledActions maps each action annotation (upshift.dev/abort,
	// retry, promote) to the value the controller last acted on.
	// +optional
	HandledActions map[string]string `json:"handledActions,omitempty"`
}

// AppRollback is how a failed rollout was undone.
type AppRollback struct {
	// Reason is why the rollout failed.
	Reason string `json:"reason"`
	// Restored: the Deployment was put back from status.backup and read
	// back equal to it (the canary Deployment deleted).
	// +optional
	Restored bool `json:"restored,omitempty"`
	// Differences are what did not come back as captured, or the
	// down-migration's failure; any makes the rollback failed.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Differences []string `json:"differences,omitempty"`
	// DownMigrationJob names the down-migration Job, when one ran.
	// +optional
	DownMigrationJob string `json:"downMigrationJob,omitempty"`
	// Group: rolled back because a rollout after this one in its group
	// (spec.after) failed and was rolled back.
	// +optional
	Group bool `json:"group,omitempty"`
	// Done: nothing is left to do (RolledBack, or Failed when
	// Differences says why).
	// +optional
	Done bool `json:"done,omitempty"`
}

// The analyses a rollout runs, by AppAnalysisStatus.Kind.
const (
	AnalysisCanary        = "Canary"
	AnalysisPrePromotion  = "PrePromotion"
	AnalysisPostPromotion = "PostPromotion"
)

// AppAnalysisStatus is where a rollout's analysis stands.
type AppAnalysisStatus struct {
	// Kind: Canary (in the background of the steps), PrePromotion or
	// PostPromotion (blue-green).
	// +optional
	Kind string `json:"kind,omitempty"`
	// Phase: Running, Successful (stopped at the promotion within its
	// limits), Failed, or Inconclusive (the canary holds for a person).
	Phase AnalysisPhase `json:"phase"`
	// StartedAt is when it began: each metric's initial delay counts
	// from it.
	StartedAt metav1.Time `json:"startedAt"`
	// Metrics are each metric's results, in spec order.
	// +optional
	// +kubebuilder:validation:MaxItems=5
	Metrics []MetricResult `json:"metrics,omitempty"`
}

// AppBlueGreenStatus is where a blue-green rollout stands.
type AppBlueGreenStatus struct {
	// ActiveSelector and PreviewSelector are the Services' selectors when
	// the rollout began: what they are switched back to.
	// +optional
	ActiveSelector map[string]string `json:"activeSelector,omitempty"`
	// +optional
	PreviewSelector map[string]string `json:"previewSelector,omitempty"`
	// PreviewReadyAt is when every pod of the preview was ready.
	// +optional
	PreviewReadyAt *metav1.Time `json:"previewReadyAt,omitempty"`
	// SwitchedAt is when the active Service was switched to the preview.
	// +optional
	SwitchedAt *metav1.Time `json:"switchedAt,omitempty"`
}

// AppTrafficStatus is what a traffic-routed canary puts back at the end.
type AppTrafficStatus struct {
	// +optional
	StableSelector map[string]string `json:"stableSelector,omitempty"`
	// +optional
	CanarySelector map[string]string `json:"canarySelector,omitempty"`
}
