package browsertest

// The UI's stable selectors for browser tests: CSS selectors for
// chromedp.ByQuery. The UI marks what a test acts on or reads with
// data-testid (TestID); inputs also have ids, their labels' for. A test
// in the web package checks every name here is in the UI's files.
//
// Elements that hold a state say it in data attributes: a component's
// data-name and data-state (Pending, Running, Succeeded, Failed), a
// timeline item's data-name and data-phase, a run row's data-run and
// data-phase, a stepper item's data-status (done, current, upcoming).

// TestID selects by data-testid.
func TestID(id string) string { return `[data-testid="` + id + `"]` }

// Input ids (each has a <label for>).
const (
	LoginPassword    = "#login-password"
	TargetVersion    = "#target-version"
	Catalog          = "#catalog"
	AllowDowngrade   = "#allow-downgrade"
	IgnorePreflights = "#ignore-preflights"
	// IgnoreHostPreflights is the Host preflights step's "Ignore the
	// failed host preflights" (shown when the server allows it).
	IgnoreHostPreflights = "#ignore-host-preflights"
	PlanText             = "#plan-text"
	// Announcer is the polite live region status changes are said in.
	Announcer = "#announcer"
)

// Step is a wizard step's section: welcome, configuration, airgap,
// host-preflights, infra, app-preflights, app-upgrade, done (the stepper
// lists those phaseOrder shows). Its heading is
// TestID("wizard-step-heading"), with data-step set to the step.
func Step(id string) string { return TestID("step-" + id) }

// Stepper is a step's item in the wizard's step list.
func Stepper(id string) string { return TestID("stepper-" + id) }

// PreflightGroup is the app's or the host's preflights' group of a
// result: fail, warn or pass; its items are TestID("preflight-item").
func PreflightGroup(result string) string { return TestID("preflight-" + result) }

// Progress is the infrastructure's ("infra") or the app's ("app")
// progress bar (role=progressbar, aria-valuenow 0-100; class
// progress-failed when the phase failed).
func Progress(kind string) string { return "#" + kind + "-progress" }

// TestIDs are the data-testid names the UI sets, by page.
var TestIDs = []string{
	// Every page.
	"nav-upgrade", "nav-runs", "nav-apps", "nav-preview", "logout", "session-role", "skip-link",
	// Login.
	"login-password", "login-submit", "login-error", "login-heading", "login-notice",
	// Wizard frame.
	"wizard-heading", "wizard-step-heading", "wizard-start", "wizard-back", "wizard-next", "wizard-error", "wizard-reload",
	"welcome-state",
	// Configuration.
	"target-version", "catalog", "allow-downgrade", "values", "value-add", "value-key", "value-value", "value-remove",
	"check", "check-result", "check-versions", "no-infra-upgrade", "hops", "hop", "configuration-error",
	"configuration-next", "start-help", "follow-running",
	// Airgap bundle: airgap-retry processes it again after a failure.
	"airgap-status", "airgap-state", "airgap-error", "airgap-logs", "airgap-retry", "airgap-help",
	// Host preflights (their results in PreflightGroup); start-upgrade
	// starts the infrastructure upgrade.
	"host-preflights-status", "host-preflights-state", "host-preflights-error", "host-preflights-request", "host-preflights-skipped",
	"host-preflights-blocking", "ignore-host-preflights", "run-host-preflights", "start-upgrade", "host-start-help",
	// A plan's preview (the hops', a run's, the preview page's).
	"plan-preview", "preview-stage", "preview-step", "preview-change", "field-errors",
	// Infrastructure and app upgrade.
	"phase-status", "phase-state", "progress", "progress-label", "live-state", "phase-error", "action-error",
	"waiting", "next-window", "approve", "failure", "failure-cause", "failure-message", "failure-actions", "rollback", "retry", "abort",
	"new-target", "run-details-link", "components", "component", "timeline-container", "timeline-run", "timeline",
	"timeline-stage", "timeline-step", "timeline-gate", "rollback-details", "logs", "logs-text",
	"support-bundle", "support-bundle-link", "support-bundle-text", "support-bundle-detail", "support-bundle-error", "support-bundle-download-error",
	// App preflights.
	"preflights-status", "preflights-error", "preflight-item", "ignore-preflights", "preflights-blocking", "run-preflights",
	// Done.
	"report", "new-upgrade", "done-error",
	// Runs.
	"runs-heading", "runs-table", "run-row", "runs-refresh", "runs-error",
	"run-heading", "run-summary", "run-phase", "run-failure", "run-actions", "run-error", "run-checks", "run-preview", "preview-result",
	// App rollouts.
	"apps-heading", "apps-table", "app-row", "apps-error", "app-heading", "app-error", "app-actions", "app-summary", "app-phase",
	"app-message", "app-next-window", "app-steps", "app-step", "app-analysis", "analysis-phase", "app-metric", "metric-chart",
	"measurements", "app-rollback", "app-conditions", "app-request-error", "app-promote", "app-abort", "app-retry", "app-pause", "app-resume",
	// Preview page.
	"preview-heading", "plan-text", "preview-submit", "preview-output", "preview-error",
}
