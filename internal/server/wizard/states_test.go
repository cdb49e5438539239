package wizard

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		from, to State
		ok       bool
		says     string
	}{
		{New, InfrastructureUpgrading, true, ""},
		{New, AppUpgrading, false, "start an infrastructure upgrade first"},
		{InfrastructureUpgrading, InfrastructureUpgrading, false, "an infrastructure upgrade is running"},
		{InfrastructureUpgrading, InfrastructureUpgraded, true, ""},
		{InfrastructureUpgradeFailed, InfrastructureUpgrading, true, ""},
		{InfrastructureUpgradeFailed, AppPreflightsRunning, false, "start the infrastructure upgrade again"},
		{InfrastructureUpgraded, AppPreflightsRunning, true, ""},
		{InfrastructureUpgraded, AppUpgrading, false, "run the app preflights"},
		{AppPreflightsRunning, AppUpgrading, false, "the app preflights are running"},
		{AppPreflightsFailed, AppUpgrading, false, "a blocking problem is not bypassed"},
		{AppPreflightsSucceeded, AppPreflightsRunning, true, ""},
		{AppUpgrading, Succeeded, true, ""},
		{AppUpgrading, InfrastructureUpgrading, false, "the app upgrade is running"},
		{AppUpgradeFailed, AppUpgrading, true, ""},
		{Succeeded, InfrastructureUpgrading, true, ""},
		{Succeeded, AppUpgrading, false, "start an infrastructure upgrade first"},
		{Succeeded, InfrastructureUpgradeFailed, true, ""},
		{InfrastructureUpgraded, InfrastructureUpgradeFailed, true, ""},
		{AppUpgrading, InfrastructureUpgradeFailed, false, "the app upgrade is running"},
		// Embedded-cluster's host preflights, from every state a start may leave.
		{New, HostPreflightsRunning, true, ""},
		{Succeeded, HostPreflightsRunning, true, ""},
		{InfrastructureUpgradeFailed, HostPreflightsRunning, true, ""},
		{HostPreflightsRunning, HostPreflightsFailed, true, ""},
		{HostPreflightsSucceeded, InfrastructureUpgrading, true, ""},
		{HostPreflightsFailed, InfrastructureUpgrading, true, ""}, // the start checks again: 400 unless they pass or are bypassed
		{HostPreflightsRunning, HostPreflightsRunning, true, ""},  // a server stopped between run's two saves is not stuck
		{InfrastructureUpgraded, HostPreflightsRunning, false, "run the app preflights"},
		{HostPreflightsSucceeded, InfrastructureUpgradeFailed, true, ""},
		{HostPreflightsFailed, HostPreflightsFailedBypassed, true, ""},
		{HostPreflightsFailedBypassed, InfrastructureUpgrading, true, ""},
		{AppUpgrading, HostPreflightsRunning, false, "the app upgrade is running"},
		// Embedded-cluster's airgap processing, from the states a new
		// upgrade starts from, and again after it failed or succeeded.
		{New, AirgapProcessing, true, ""},
		{Succeeded, AirgapProcessing, true, ""},
		{InfrastructureUpgradeFailed, AirgapProcessing, true, ""},
		{AirgapProcessingFailed, AirgapProcessing, true, ""}, // final in embedded-cluster: here a registry that was down is tried again
		{AirgapProcessed, AirgapProcessing, true, ""},
		{AirgapProcessing, AirgapProcessed, true, ""},
		{AirgapProcessing, AirgapProcessingFailed, true, ""},
		{AirgapProcessing, AirgapProcessing, false, "the airgap bundle is being processed"},
		{AirgapProcessing, InfrastructureUpgrading, false, "the airgap bundle is being processed"},
		{AirgapProcessing, HostPreflightsRunning, false, "the airgap bundle is being processed"},
		{AirgapProcessed, HostPreflightsRunning, true, ""},
		{AirgapProcessed, InfrastructureUpgrading, true, ""},
		{AirgapProcessed, AppPreflightsRunning, false, "start the infrastructure upgrade"},
		{AirgapProcessingFailed, AppPreflightsRunning, false, "process the bundle again (POST /api/linux/upgrade/airgap/process)"},
		{InfrastructureUpgraded, AirgapProcessing, false, "run the app preflights"},
		{AppUpgrading, AirgapProcessing, false, "the app upgrade is running"},
		{HostPreflightsSucceeded, AirgapProcessing, true, ""}, // a server restarted with another bundle
	} {
		err := Check(tc.from, tc.to)
		if tc.ok {
			if err != nil {
				t.Errorf("%s → %s: %v, want allowed", tc.from, tc.to, err)
			}
			continue
		}
		var c *ConflictError
		if !errors.As(err, &c) {
			t.Errorf("%s → %s: %v, want a ConflictError", tc.from, tc.to, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s → %s: %q, want it to say %q", tc.from, tc.to, err, tc.says)
		}
	}
}

// Every state is reachable from New and every state but a driving one
// can start a new infrastructure upgrade or is on its way to one: the
// wizard never gets stuck.
func TestEveryStateReachableAndNoneStuck(t *testing.T) {
	seen := map[State]bool{New: true}
	queue := []State{New}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, n := range transitions[s] {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	for _, s := range All {
		if !seen[s] {
			t.Errorf("%s is not reachable from New", s)
		}
		if !s.Valid() {
			t.Errorf("%s is not in the transition table", s)
		}
		if len(transitions[s]) == 0 {
			t.Errorf("%s has no way out", s)
		}
	}
}

// A server killed while processing drives it again on start: the state
// is driving; the others of the airgap processing are not.
func TestAirgapStates(t *testing.T) {
	if !AirgapProcessing.Driving() || AirgapProcessed.Driving() || AirgapProcessingFailed.Driving() {
		t.Error("only AirgapProcessing is driving")
	}
	for _, s := range All {
		if s.Airgap() != strings.HasPrefix(string(s), "Airgap") {
			t.Errorf("%s.Airgap() = %v", s, s.Airgap())
		}
	}
}

// The bundle may be processed again after the host preflights ran (a
// server restarted with another bundle); the host preflights do not run
// where they would drop the app phase.
func TestAirgapAfterHostPreflightsAndNoPreflightsMidApp(t *testing.T) {
	for _, s := range []State{HostPreflightsRunning, HostPreflightsSucceeded, HostPreflightsFailed, HostPreflightsFailedBypassed} {
		if err := Check(s, AirgapProcessing); err != nil {
			t.Errorf("%s → AirgapProcessing: %v", s, err)
		}
	}
	for _, s := range []State{InfrastructureUpgraded, AppPreflightsSucceeded, AppPreflightsFailed, AppUpgradeFailed, InfrastructureUpgrading, AppUpgrading} {
		if Check(s, HostPreflightsRunning) == nil {
			t.Errorf("%s → HostPreflightsRunning allowed: it would drop the app phase", s)
		}
	}
}
