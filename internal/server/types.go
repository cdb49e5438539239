package server

import (
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/server/wizard"
	"github.com/upshift-dev/upshift/internal/upgrade"
)

// The JSON bodies of the API (docs/api.md). Where embedded-cluster's v3
// API has the same thing, the shape and names are its (types.Infra,
// types.Status, types.APIError); Upshift's additions are marked.

// State is embedded-cluster's types.State.
type State string

// The states of a Status.
const (
	StatePending   State = "Pending"
	StateRunning   State = "Running"
	StateSucceeded State = "Succeeded"
	StateFailed    State = "Failed"
)

// Status is embedded-cluster's types.Status.
type Status struct {
	State       State     `json:"state"`
	Description string    `json:"description"`
	LastUpdated time.Time `json:"lastUpdated"`
}

// Component is embedded-cluster's types.InfraComponent: here, a stage of
// a hop's plan.
type Component struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
}

// Progress is embedded-cluster's types.Infra, also the app upgrade's
// status (types.AppUpgrade plus components).
type Progress struct {
	Components []Component `json:"components"`
	Logs       string      `json:"logs"`
	Status     Status      `json:"status"`
	// Runs are the runs of the phase, in order (Upshift's).
	Runs []string `json:"runs"`
	// Waiting is the approval a run waits at (Upshift's).
	Waiting *Waiting `json:"waiting"`
	// NextWindow is when the maintenance window the phase waits for
	// opens (Upshift's; the plan's spec.windows let no stage start now).
	NextWindow *time.Time `json:"nextWindow,omitempty"`
	// TargetVersion is the version the infrastructure upgrade reaches
	// (Upshift's; "" on the app's and before a target is known).
	TargetVersion string `json:"targetVersion,omitempty"`
	// SupportBundle is the one collected when the infrastructure upgrade
	// ended (Upshift's; the infrastructure's status only).
	SupportBundle *SupportBundle `json:"supportBundle,omitempty"`
}

// Waiting names a run and the approval step it waits at, with the
// step's message to the approver (redacted; "" when the plan gives none).
type Waiting struct {
	Run     string `json:"run"`
	Step    string `json:"step"`
	Message string `json:"message,omitempty"`
}

// APIError is embedded-cluster's types.APIError.
type APIError struct {
	StatusCode int        `json:"statusCode"`
	Message    string     `json:"message"`
	Field      string     `json:"field,omitempty"`
	Errors     []APIError `json:"errors,omitempty"`
}

func (e *APIError) Error() string { return e.Message }

// UpgradeRequest is the body of infra check and infra upgrade:
// embedded-cluster's types.LinuxInfraUpgradeRequest
// ({"ignoreHostPreflights": false}) plus Upshift's fields.
type UpgradeRequest struct {
	// TargetVersion "" is the server's (--target, else the catalog's
	// newest release).
	TargetVersion  string            `json:"targetVersion"`
	Catalog        string            `json:"catalog,omitempty"`
	Values         map[string]string `json:"values,omitempty"`
	AllowDowngrade bool              `json:"allowDowngrade,omitempty"`
	// IgnoreHostPreflights is embedded-cluster's: a start past failed host
	// preflights, where the server allows it (--allow-ignore-host-preflights).
	IgnoreHostPreflights bool `json:"ignoreHostPreflights,omitempty"`
}

// CheckResult answers infra check.
type CheckResult struct {
	RequiresInfraUpgrade bool                 `json:"requiresInfraUpgrade"`
	CurrentVersion       string               `json:"currentVersion"`
	TargetVersion        string               `json:"targetVersion"`
	Kubernetes           string               `json:"kubernetes,omitempty"`
	Findings             []catalog.Finding    `json:"findings,omitempty"`
	Describe             []string             `json:"describe"`
	Hops                 []upgrade.HopPreview `json:"hops"`
}

// WizardState answers GET /api/linux/upgrade/state (Upshift's).
type WizardState struct {
	State                wizard.State `json:"state"`
	TargetVersion        string       `json:"targetVersion"`
	CurrentVersion       string       `json:"currentVersion"`
	Catalog              string       `json:"catalog"`
	AppPlan              string       `json:"appPlan"`
	RequiresInfraUpgrade bool         `json:"requiresInfraUpgrade"`
	InfraRuns            []string     `json:"infraRuns"`
	AppRun               string       `json:"appRun"`
	// IsAirgap says the server has an airgap bundle to process before
	// the infrastructure phase (embedded-cluster's InitialState field).
	IsAirgap    bool      `json:"isAirgap"`
	LastUpdated time.Time `json:"lastUpdated"`
}

// PreflightResult is one result of the app preflights
// (embedded-cluster's types.PreflightsRecord).
type PreflightResult struct {
	Title   string `json:"title"`
	Message string `json:"message"`
	// Strict: a failure of it blocks the app upgrade (every problem of
	// the plan's preflight and its blocking checks; not warning or info).
	Strict bool `json:"strict"`
}

// PreflightOutput groups results (embedded-cluster's
// types.PreflightsOutput).
type PreflightOutput struct {
	Pass []PreflightResult `json:"pass"`
	Warn []PreflightResult `json:"warn"`
	Fail []PreflightResult `json:"fail"`
}

// AppPreflights answers the app preflight routes (embedded-cluster's
// types.UpgradeAppPreflightsStatusResponse).
type AppPreflights struct {
	// Titles are the results' titles, failures first ([] while running).
	Titles                        []string        `json:"titles"`
	Output                        PreflightOutput `json:"output"`
	Status                        Status          `json:"status"`
	AllowIgnoreAppPreflights      bool            `json:"allowIgnoreAppPreflights"`
	HasStrictAppPreflightFailures bool            `json:"hasStrictAppPreflightFailures"`
}

// AppUpgradeRequest is the body of app upgrade.
type AppUpgradeRequest struct {
	IgnoreAppPreflights bool `json:"ignoreAppPreflights,omitempty"`
}

// RunSummary is one run in the runs list.
type RunSummary struct {
	Name string `json:"name"`
	// Plan is the plan's name, which names its run.
	Plan            string     `json:"plan"`
	Version         string     `json:"version"`
	FromVersion     string     `json:"fromVersion,omitempty"`
	Phase           string     `json:"phase"`
	Stage           string     `json:"stage,omitempty"`
	Step            string     `json:"step,omitempty"`
	Message         string     `json:"message,omitempty"`
	Failure         string     `json:"failure,omitempty"`
	StartedAt       *time.Time `json:"startedAt,omitempty"`
	FinishedAt      *time.Time `json:"finishedAt,omitempty"`
	DurationSeconds float64    `json:"durationSeconds,omitempty"`
	Transitions     int        `json:"transitions"`
	Attempt         int        `json:"attempt,omitempty"`
	Waiting         *Waiting   `json:"waiting"`
}

// RunDetail answers GET /api/runs/{name}.
type RunDetail struct {
	Summary RunSummary           `json:"summary"`
	Run     *v1alpha1.UpgradeRun `json:"run"`
}

// RunEvent is the data of an SSE transition event.
type RunEvent struct {
	Summary RunSummary             `json:"summary"`
	Stages  []v1alpha1.StageStatus `json:"stages"`
}

// ApproveRequest is the body of approve.
type ApproveRequest struct {
	Step string `json:"step,omitempty"`
}

// PlanPreviewResult answers POST /api/plans/preview.
type PlanPreviewResult struct {
	Plan    string              `json:"plan"`
	Version string              `json:"version"`
	Errors  []APIError          `json:"errors,omitempty"`
	Preview *runner.PlanPreview `json:"preview,omitempty"`
}

// LoginRequest and LoginResponse are the login route's bodies.
type LoginRequest struct {
	Password string `json:"password"`
}

// LoginResponse carries the token.
type LoginResponse struct {
	Token     string    `json:"token"`
	Role      string    `json:"role"`
	ExpiresAt time.Time `json:"expiresAt"`
}
