// Package wizard is the upgrade wizard's state machine: which call the
// HTTP API allows in which state. It is pure; the server persists the
// state and drives the runs.
//
// The states are embedded-cluster's v3 upgrade states (the real API's
// names, not the seed's InfrastructureChecking), without its
// configuration states, which Upshift's catalog and values replace. Two
// differences, both because Upshift
// rolls a failed hop back and verifies the restore: a failed
// infrastructure upgrade is not final (it may be started again), and a
// finished upgrade may be followed by a new one. And one because a
// blocking problem would make the run refuse anyway: failed app
// preflights are not bypassed (embedded-cluster's
// AppPreflightsFailedBypassed), they are run again once fixed.
//
// Airgap processing (pushing the bundle's images to the cluster's
// registry) comes before the infrastructure phase, as embedded-cluster's.
// Where embedded-cluster makes AirgapProcessingFailed final, Upshift may
// process again: the usual cause is a registry that was down or refused
// a push, and pushes are idempotent. It may also process again once
// processed (a registry wiped since), and start a new processing after a
// failed infrastructure upgrade or a finished one. Whether the infrastructure
// phase may start without it is the server's to say (it knows whether it
// has a bundle), not the state machine's.
package wizard

import "fmt"

// State is where the wizard is.
type State string

// The states, in the order an upgrade goes through them.
const (
	New                          State = "New"
	HostPreflightsRunning        State = "HostPreflightsRunning"
	HostPreflightsSucceeded      State = "HostPreflightsSucceeded"
	HostPreflightsFailed         State = "HostPreflightsFailed"
	HostPreflightsFailedBypassed State = "HostPreflightsFailedBypassed"
	InfrastructureUpgrading      State = "InfrastructureUpgrading"
	InfrastructureUpgraded       State = "InfrastructureUpgraded"
	InfrastructureUpgradeFailed  State = "InfrastructureUpgradeFailed"
	AppPreflightsRunning         State = "AppPreflightsRunning"
	AppPreflightsSucceeded       State = "AppPreflightsSucceeded"
	AppPreflightsFailed          State = "AppPreflightsFailed"
	AppUpgrading                 State = "AppUpgrading"
	Succeeded                    State = "Succeeded"
	AppUpgradeFailed             State = "AppUpgradeFailed"
	AirgapProcessing             State = "AirgapProcessing"
	AirgapProcessed              State = "AirgapProcessed"
	AirgapProcessingFailed       State = "AirgapProcessingFailed"
)

// All lists every state, for validation and the API document.
var All = []State{New, HostPreflightsRunning, HostPreflightsSucceeded, HostPreflightsFailed, HostPreflightsFailedBypassed, InfrastructureUpgrading, InfrastructureUpgraded, InfrastructureUpgradeFailed,
	AppPreflightsRunning, AppPreflightsSucceeded, AppPreflightsFailed, AppUpgrading, Succeeded, AppUpgradeFailed,
	AirgapProcessing, AirgapProcessed, AirgapProcessingFailed}

// transitions are the allowed moves. A state missing here has none. A
// phase that ended may go back to failed: an operator rolled one of its
// runs back since (POST /api/runs/{name}/rollback), and what stands on
// it must not go on as if it had not.
var transitions = map[State][]State{
	New:                         {InfrastructureUpgrading},
	InfrastructureUpgrading:     {InfrastructureUpgraded, InfrastructureUpgradeFailed},
	InfrastructureUpgradeFailed: {InfrastructureUpgrading},
	InfrastructureUpgraded:      {AppPreflightsRunning, InfrastructureUpgrading, InfrastructureUpgradeFailed},
	AppPreflightsRunning:        {AppPreflightsSucceeded, AppPreflightsFailed},
	AppPreflightsSucceeded:      {AppPreflightsRunning, AppUpgrading, InfrastructureUpgrading, InfrastructureUpgradeFailed},
	AppPreflightsFailed:         {AppPreflightsRunning, InfrastructureUpgrading, InfrastructureUpgradeFailed},
	AppUpgrading:                {Succeeded, AppUpgradeFailed},
	AppUpgradeFailed:            {AppUpgrading, InfrastructureUpgrading, InfrastructureUpgradeFailed},
	Succeeded:                   {InfrastructureUpgrading, InfrastructureUpgradeFailed, AppUpgradeFailed},

	// Embedded-cluster's host preflights: run before the infrastructure
	// upgrade, from the states a new one starts from; bypassed only where
	// the server allows it. A start runs them itself, so each of their
	// states may start (or refuse, 400) as the checks then say; one that
	// ends (a phase rolled back) may go back to failed.
	HostPreflightsRunning:        {HostPreflightsRunning, HostPreflightsSucceeded, HostPreflightsFailed, InfrastructureUpgrading, InfrastructureUpgradeFailed},
	HostPreflightsSucceeded:      {HostPreflightsRunning, InfrastructureUpgrading, InfrastructureUpgradeFailed},
	HostPreflightsFailed:         {HostPreflightsRunning, HostPreflightsFailedBypassed, InfrastructureUpgrading, InfrastructureUpgradeFailed},
	HostPreflightsFailedBypassed: {HostPreflightsRunning, InfrastructureUpgrading, InfrastructureUpgradeFailed},

	// Embedded-cluster's airgap processing, before the host preflights
	// and the infrastructure upgrade (Upshift's infrastructure phase always
	// runs, finding nothing to upgrade at worst, so not straight to the app
	// preflights). A server without a bundle is not stuck at failed: it
	// may start the infrastructure phase. A run of an earlier upgrade
	// rolled back since sends both ends back to failed, as the others.
	AirgapProcessing:       {AirgapProcessed, AirgapProcessingFailed},
	AirgapProcessed:        {HostPreflightsRunning, InfrastructureUpgrading, InfrastructureUpgradeFailed},
	AirgapProcessingFailed: {HostPreflightsRunning, InfrastructureUpgrading, InfrastructureUpgradeFailed},
}

func init() {
	// A new upgrade starts from New, Succeeded or a failed infrastructure
	// upgrade: there the host preflights may run. Not after the
	// infrastructure upgraded, while the app phase is under way or failed:
	// the host preflights' states lead only to an infrastructure upgrade,
	// so running them there would drop the app phase.
	for _, from := range []State{New, InfrastructureUpgradeFailed, Succeeded} {
		transitions[from] = append(transitions[from], HostPreflightsRunning)
	}
	// The bundle may be processed again from wherever a new upgrade
	// starts or waits for its start: a server restarted with another
	// bundle after the host preflights ran is not stuck.
	for _, from := range []State{New, Succeeded, InfrastructureUpgradeFailed, AirgapProcessingFailed, AirgapProcessed,
		HostPreflightsRunning, HostPreflightsSucceeded, HostPreflightsFailed, HostPreflightsFailedBypassed} {
		transitions[from] = append(transitions[from], AirgapProcessing)
	}
}

// HostPreflights says s is one of the host preflights' states.
func (s State) HostPreflights() bool {
	return s == HostPreflightsRunning || s == HostPreflightsSucceeded || s == HostPreflightsFailed || s == HostPreflightsFailedBypassed
}

// Driving says the server is working in this state: a run is being
// driven, so nothing else may start until it ends. A server that starts
// in a driving state drives it on.
func (s State) Driving() bool {
	return s == InfrastructureUpgrading || s == AppPreflightsRunning || s == AppUpgrading || s == AirgapProcessing
}

// Airgap says s is one of the airgap processing's states.
func (s State) Airgap() bool {
	return s == AirgapProcessing || s == AirgapProcessed || s == AirgapProcessingFailed
}

// Valid says s is one of the states.
func (s State) Valid() bool {
	_, ok := transitions[s]
	return ok
}

// ConflictError is a transition the state does not allow: the API
// answers 409 with its message.
type ConflictError struct {
	From, To State
}

func (e *ConflictError) Error() string {
	if e.From.Driving() {
		return fmt.Sprintf("%s: wait until it ends (state %s)", describe(e.From), e.From)
	}
	return fmt.Sprintf("cannot go from %s to %s: %s", e.From, e.To, next(e.From))
}

// Check returns nil when from may move to to, else a *ConflictError.
func Check(from, to State) error {
	for _, s := range transitions[from] {
		if s == to {
			return nil
		}
	}
	return &ConflictError{From: from, To: to}
}

// describe words a driving state for a conflict.
func describe(s State) string {
	switch s {
	case InfrastructureUpgrading:
		return "an infrastructure upgrade is running"
	case AppPreflightsRunning:
		return "the app preflights are running"
	case AppUpgrading:
		return "the app upgrade is running"
	case AirgapProcessing:
		return "the airgap bundle is being processed"
	}
	return string(s)
}

// next says which calls the state allows, for a conflict's message.
func next(s State) string {
	switch s {
	case New, Succeeded:
		return "start an infrastructure upgrade first (POST /api/linux/upgrade/infra/upgrade)"
	case InfrastructureUpgradeFailed:
		return "start the infrastructure upgrade again (POST /api/linux/upgrade/infra/upgrade)"
	case AirgapProcessed:
		return "start the infrastructure upgrade (POST /api/linux/upgrade/infra/upgrade) or run the host preflights (POST /api/linux/upgrade/host-preflights/run)"
	case AirgapProcessingFailed:
		return "fix what failed (its cause is in GET /api/linux/upgrade/airgap/status) and process the bundle again (POST /api/linux/upgrade/airgap/process)"
	case HostPreflightsRunning:
		return "run the host preflights again (POST /api/linux/upgrade/host-preflights/run): a server stopped while they ran left them here"
	case HostPreflightsSucceeded, HostPreflightsFailedBypassed:
		return "start the infrastructure upgrade (POST /api/linux/upgrade/infra/upgrade) or run the host preflights again"
	case HostPreflightsFailed:
		return "fix what the host preflights found and run them again (POST /api/linux/upgrade/host-preflights/run), or start the upgrade with ignoreHostPreflights where the server allows it"
	case InfrastructureUpgraded:
		return "run the app preflights (POST /api/linux/upgrade/app-preflights/run)"
	case AppPreflightsSucceeded:
		return "upgrade the app (POST /api/linux/upgrade/app/upgrade) or run the app preflights again"
	case AppPreflightsFailed:
		return "fix what the app preflights found and run them again (POST /api/linux/upgrade/app-preflights/run): a blocking problem is not bypassed"
	case AppUpgradeFailed:
		return "upgrade the app again (POST /api/linux/upgrade/app/upgrade) or start a new upgrade"
	}
	return "wait until it ends"
}
