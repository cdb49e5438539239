package report

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// UnknownVersion is the From of a run whose record does not say what it
// started from: no earlier run succeeded on the cluster, or the record
// predates spec.fromVersion.
const UnknownVersion = "unknown"

// BeforeAnyChange is the Stage of a gate that is a health check of the
// plan's spec.checks, run before the run's first change.
const BeforeAnyChange = "before any change"

// Report is what one run did.
type Report struct {
	// Name is the run's, which is its plan's.
	Name       string `json:"name"`
	PlanDigest string `json:"planDigest,omitempty"`
	From       string `json:"from"`
	To         string `json:"to"`
	// Phase is the run's; Summary says what it means, in a sentence.
	Phase   v1alpha1.RunPhase `json:"phase"`
	Summary string            `json:"summary"`
	// Message is the record's last message; Failure what stopped the run.
	Message string `json:"message,omitempty"`
	Failure string `json:"failure,omitempty"`
	Attempt int    `json:"attempt"`
	Timing
	Stages []Stage `json:"stages"`
	Gates  Gates   `json:"gates"`
	// Warnings are what deserves a look although it did not stop the run:
	// warning gates that did not pass, retried steps, objects a rollback
	// kept or could not compare.
	Warnings []string  `json:"warnings,omitempty"`
	Rollback *Rollback `json:"rollback,omitempty"`
	Next     []Action  `json:"next,omitempty"`
}

// Timing is when something started and finished, and how long it took;
// each is absent until known.
type Timing struct {
	Started  *time.Time       `json:"started,omitempty"`
	Finished *time.Time       `json:"finished,omitempty"`
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// Stage is one stage and its steps.
type Stage struct {
	Name     string         `json:"name"`
	Phase    v1alpha1.Phase `json:"phase"`
	Attempts int            `json:"attempts,omitempty"`
	Timing
	Message string  `json:"message,omitempty"`
	Backup  *Backup `json:"backup,omitempty"`
	Steps   []Step  `json:"steps"`
}

// Backup is what the stage's snapshot holds.
type Backup struct {
	// Objects existed before the stage; Absent are those it may create.
	Objects      int `json:"objects"`
	Absent       int `json:"absent,omitempty"`
	HelmReleases int `json:"helmReleases,omitempty"`
}

// Step is one step.
type Step struct {
	Name     string         `json:"name"`
	Phase    v1alpha1.Phase `json:"phase"`
	Attempts int            `json:"attempts,omitempty"`
	Timing
	Message string `json:"message,omitempty"`
	// ApprovedBy is who approved an approval step.
	ApprovedBy string `json:"approvedBy,omitempty"`
}

// Gates are the run's gate results by severity, in plan order.
type Gates struct {
	Blocking []Gate `json:"blocking,omitempty"`
	Warning  []Gate `json:"warning,omitempty"`
	Info     []Gate `json:"info,omitempty"`
}

// GateResult is a gate's result, whatever its severity.
type GateResult string

const (
	Passed     GateResult = "passed"
	Failed     GateResult = "failed"
	Checking   GateResult = "checking"
	NotChecked GateResult = "not-checked"
)

// Gate is one gate's result.
type Gate struct {
	Stage    string            `json:"stage"`
	Name     string            `json:"name"`
	Severity v1alpha1.Severity `json:"severity"`
	Result   GateResult        `json:"result"`
	Attempts int               `json:"attempts,omitempty"`
	Timing
	Message string `json:"message,omitempty"`
}

// Rollback is what undoing the run did.
type Rollback struct {
	// Reason is what stopped the run and asked for the rollback.
	Reason string `json:"reason,omitempty"`
	// Done: the rollback is over (succeeded or failed); Verified: every
	// stage that changed something was restored and equals its snapshot.
	Done     bool `json:"done"`
	Verified bool `json:"verified"`
	// Stages are the stages the rollback undid, tried or skipped, last
	// stage first as it went.
	Stages []RolledBack `json:"stages,omitempty"`
	// Pending names the stages that changed something and are not undone
	// (yet, or because the rollback stopped at a failed restore).
	Pending []string `json:"pending,omitempty"`
}

// RolledBack is one stage's rollback.
type RolledBack struct {
	Stage    string         `json:"stage"`
	Phase    v1alpha1.Phase `json:"phase"`
	Verified bool           `json:"verified"`
	Message  string         `json:"message,omitempty"`
	Restored int            `json:"restored,omitempty"`
	Deleted  int            `json:"deleted,omitempty"`
	// Kept, Differences and NotCompared as the record's Rollback holds them.
	Kept        []string `json:"kept,omitempty"`
	Differences []string `json:"differences,omitempty"`
	NotCompared []string `json:"notCompared,omitempty"`
}
