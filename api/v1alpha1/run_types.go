package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RunKind names a run record.
const RunKind = "UpgradeRun"

// UpgradeRun is one execution of an UpgradePlan: the plan it runs and
// where it stands. It is saved after every transition (the CLI's runs and
// the controller's alike, in the runs namespace), so any process on any
// machine can resume it. Its spec.plan is the plan as redacted for
// display (internal/redact): inline sources, Helm values and URL
// credentials are not in the resource; the plan as written is kept with
// the resolved sources in the immutable Secrets spec.sources names.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=upshift
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.plan.version`,description="The version the run reaches"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.status.stage`,description="The stage the run is at, or stopped at"
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.step`,description="The step or gate the run is at, or stopped at"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type UpgradeRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              UpgradeRunSpec `json:"spec"`
	// +optional
	Status RunStatus `json:"status,omitempty"`
}

// UpgradeRunList is a list of UpgradeRuns.
//
// +kubebuilder:object:root=true
type UpgradeRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []UpgradeRun `json:"items"`
}

// UpgradeRunSpec is the plan as it was resolved when the run started.
type UpgradeRunSpec struct {
	// PlanNamespace is the namespace of the plan the run runs (its
	// UpgradePlan's; its PlatformUpgrade's for a hop); empty for a plan
	// applied from a file that names none. With the plan's name it keys
	// the run: runs are named <planNamespace>.<plan name> (engine.RunName),
	// so same-named plans of two namespaces never share a run.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	PlanNamespace string `json:"planNamespace,omitempty"`
	// Owner is the resource that started the run, the only one that may
	// act on it through the controller: its UpgradePlan, or the
	// PlatformUpgrade whose hop it is. Absent for a run the CLI or the
	// wizard started. Written once, with the spec.
	// +optional
	Owner *RunOwner `json:"owner,omitempty"`
	// Plan is the plan redacted for display: every inline source is
	// replaced by its size and digest, every Helm value hidden (the keys
	// stay), and URLs lose their credentials. Spec.Sources holds the plan
	// as written.
	Plan UpgradePlanSpec `json:"plan"`
	// PlanDigest is the SHA-256 of the plan spec and of every source's
	// content: a changed plan (or a changed file it points at) is noticed.
	PlanDigest string `json:"planDigest"`
	// FromVersion is the version the cluster was at when the run started,
	// as its run history tells: the version the last run that succeeded
	// on the cluster before it reached. Empty when no earlier run
	// succeeded (or the record predates the field): unknown. Written
	// once, with the spec; reports show it.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	FromVersion string `json:"fromVersion,omitempty"`
	// SourceDigests maps each source's field path to the SHA-256 of its
	// content, so a refusal can say which source changed.
	// +optional
	SourceDigests map[string]string `json:"sourceDigests,omitempty"`
	// Sources locates the plan as written and the resolved sources'
	// contents (manifests, charts, values files), written once when the
	// run starts into immutable Secrets of their own: they may hold
	// secret values, and the record saved on every transition stays
	// small. Records written before this field existed keep their sources
	// in the record's Secret.
	// +optional
	Sources *BlobRef `json:"sources,omitempty"`
}

// RunOwner names the resource a run belongs to.
type RunOwner struct {
	// Kind is UpgradePlan or PlatformUpgrade.
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// UID is the owner's metadata.uid when it started the run.
	UID types.UID `json:"uid"`
}

// String is the form messages use: "UpgradePlan team-a/web".
func (o *RunOwner) String() string {
	if o == nil {
		return "the CLI (no owner recorded)"
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// BlobRef locates a blob kept as content-addressed, immutable chunk
// Secrets (internal/chunks).
type BlobRef struct {
	// Secrets hold the gzip-compressed blob in order, each under 1 MiB.
	Secrets []string `json:"secrets"`
	// SHA256 of the uncompressed blob.
	SHA256 string `json:"sha256"`
	// Bytes is the blob's size uncompressed; Packed its size compressed.
	Bytes  int64 `json:"bytes"`
	Packed int64 `json:"packed"`
}

// RunPhase is where a run stands, for display and for the CLI's exit code.
type RunPhase string

const (
	RunPending        RunPhase = "Pending"
	RunRunning        RunPhase = "Running"
	RunSucceeded      RunPhase = "Succeeded"
	RunFailed         RunPhase = "Failed" // failed and not rolled back: an operator must act
	RunRollingBack    RunPhase = "RollingBack"
	RunRolledBack     RunPhase = "RolledBack"
	RunRollbackFailed RunPhase = "RollbackFailed"
	RunAborted        RunPhase = "Aborted" // stopped by an operator; rollback still possible
)

// Finished reports whether the run will not move again without an
// operator's command (rollback, retry, or apply --retry).
func (p RunPhase) Finished() bool {
	return p == RunSucceeded || p == RunRolledBack
}

// Phase of a stage, a step or a gate.
type Phase string

const (
	PhasePending     Phase = "Pending"
	PhaseBackingUp   Phase = "BackingUp"
	PhaseRunning     Phase = "Running"
	PhaseGating      Phase = "Gating"
	PhaseSucceeded   Phase = "Succeeded"
	PhaseFailed      Phase = "Failed"
	PhaseRollingBack Phase = "RollingBack"
	PhaseRolledBack  Phase = "RolledBack"
	PhaseSkipped     Phase = "Skipped" // rollback had nothing to undo
	PhaseRollbackErr Phase = "RollbackFailed"
	// PhaseWarned: a warning or info gate that did not pass; the stage
	// goes on.
	PhaseWarned Phase = "Warned"
)

// RunStatus is a run's progress, index-aligned with the plan's stages.
// Decide from the conditions (kstatus: Ready, Reconciling, Stalled); phase,
// stage and step are for display.
type RunStatus struct {
	// ObservedGeneration is the run's metadata.generation this status
	// describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (the run reached the version), Reconciling
	// (present while the run moves), Stalled (present when the run
	// stopped and a person must act), RolledBack and WaitingForApproval.
	// Set on every save from the rest of the status.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	Phase      RunPhase           `json:"phase,omitempty"`
	// Attempt counts starts from the first stage (apply --retry adds one).
	Attempt int `json:"attempt,omitempty"`
	// Transitions counts saved transitions; it orders events and drives
	// the test failpoint.
	Transitions int    `json:"transitions,omitempty"`
	Message     string `json:"message,omitempty"`
	// Stage and Step are where the run is, or where it stopped: the stage
	// and the step or gate it is at (several steps running side by side
	// are joined with commas); empty before it starts and once it
	// succeeded. Derived from Stages on every transition, for display
	// (the printer columns).
	Stage string `json:"stage,omitempty"`
	Step  string `json:"step,omitempty"`
	// Failure is what stopped the run: the failed stage's message, or the
	// operator's rollback request. It survives the rollback's messages.
	Failure    string            `json:"failure,omitempty"`
	StartedAt  *metav1.MicroTime `json:"startedAt,omitempty"`
	FinishedAt *metav1.MicroTime `json:"finishedAt,omitempty"`
	// RollbackRequested is set when a rollback was asked for (automatic or
	// by an operator) and not finished yet; a resumed run goes on with it.
	RollbackRequested bool `json:"rollbackRequested,omitempty"`
	// AbortRequested asks the process holding the run to stop where it is.
	AbortRequested bool `json:"abortRequested,omitempty"`
	// Approvals are the approval steps operators approved (upshift approve).
	Approvals []Approval `json:"approvals,omitempty"`
	// Checks are the plan's health checks (spec.checks) as they stood
	// when the run, or its latest attempt, started: Succeeded, or Warned
	// (a warning or info check that failed; a blocking one refuses the
	// run, which then has no record).
	// +optional
	Checks []StepStatus  `json:"checks,omitempty"`
	Stages []StageStatus `json:"stages,omitempty"`
}

// StageStatus is one stage's progress.
type StageStatus struct {
	Name       string            `json:"name"`
	Phase      Phase             `json:"phase"`
	Attempts   int               `json:"attempts,omitempty"`
	StartedAt  *metav1.MicroTime `json:"startedAt,omitempty"`
	FinishedAt *metav1.MicroTime `json:"finishedAt,omitempty"`
	Message    string            `json:"message,omitempty"`
	// Backup is the snapshot taken before the stage's first change.
	Backup   *BackupRef   `json:"backup,omitempty"`
	Steps    []StepStatus `json:"steps,omitempty"`
	Gates    []StepStatus `json:"gates,omitempty"`
	Rollback *Rollback    `json:"rollback,omitempty"`
}

// StepStatus is one step's (or gate's) progress.
type StepStatus struct {
	Name       string            `json:"name"`
	Phase      Phase             `json:"phase"`
	Attempts   int               `json:"attempts,omitempty"`
	StartedAt  *metav1.MicroTime `json:"startedAt,omitempty"`
	FinishedAt *metav1.MicroTime `json:"finishedAt,omitempty"`
	Message    string            `json:"message,omitempty"`
}

// BackupRef locates a stage's snapshot in the cluster.
type BackupRef struct {
	// Secrets hold the gzip-compressed snapshot in order, each under 1 MiB.
	Secrets []string `json:"secrets"`
	// SHA256 of the uncompressed snapshot.
	SHA256 string `json:"sha256"`
	// Objects counts the objects that existed; Absent those the stage may
	// create (deleted again on rollback, except CRDs).
	Objects   int          `json:"objects"`
	Absent    int          `json:"absent,omitempty"`
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
	// HelmReleases are the revisions the stage's Helm releases were at
	// before it changed anything: what a rollback returns them to.
	HelmReleases []HelmRevision `json:"helmReleases,omitempty"`
}

// HelmRevision is a Helm release's revision; 0 when it was not installed
// (a rollback uninstalls it).
type HelmRevision struct {
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	Revision  int    `json:"revision"`
}

// Rollback is what undoing a stage did and found.
type Rollback struct {
	Restored int `json:"restored,omitempty"`
	Deleted  int `json:"deleted,omitempty"`
	// Kept lists objects the stage created that were left in place (CRDs:
	// deleting one deletes its data).
	Kept []string `json:"kept,omitempty"`
	// Differences lists every restored object that does not equal its
	// snapshot; any makes the rollback fail.
	Differences []string `json:"differences,omitempty"`
	// NotCompared lists fields of restored objects that differ from the
	// snapshot because another manager took them over after the restore
	// (an autoscaler setting spec.replicas): shown, not held against the
	// rollback.
	NotCompared []string `json:"notCompared,omitempty"`
}

// Approval records who approved an approval step, and when.
type Approval struct {
	Step string           `json:"step"`
	By   string           `json:"by"`
	At   metav1.MicroTime `json:"at"`
}
