package server_test

import (
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	upshiftserver "github.com/upshift-dev/upshift/internal/server"
)

// TestWizardResumesOnlyItsOwnHops: the wizard's upgrade resumes only the
// hops it started itself (its runs carry its record's ID), and never one
// an operator aborted unless asked to retry it. A hop of the same name
// left unfinished by an earlier wizard (its state deleted to start over)
// or by the CLI is refused, naming the run and its owner, and stays as it
// was; the wizard's own aborted hop is not resumed by a new upgrade, only
// by the run's retry.
func TestWizardResumesOnlyItsOwnHops(t *testing.T) {
	t.Parallel()
	// Each case its own runs namespace and platform (the hop's run name
	// is taken for good by the other owner's run).
	t.Run("started-over", func(t *testing.T) {
		e := newEnv(t)
		ns, catalog, _ := e.platform()
		s := e.serve("--catalog", catalog)
		hop := s.startWaiting(s.login(adminPassword)).Waiting.Run
		s.stop()
		// The operator starts the wizard over: a new record, a new ID.
		if err := e.cs.CoreV1().ConfigMaps(e.runsNS).Delete(e.ctx, upshiftserver.StateConfigMap, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		s2 := e.serve("--catalog", catalog)
		admin := s2.login(adminPassword)
		before := s2.hopRun(hop, admin)
		if before.Spec.Owner == nil || before.Spec.Owner.Kind != upshiftserver.WizardKind {
			t.Fatalf("the earlier wizard's run %s records owner %v", hop, before.Spec.Owner)
		}
		s2.refusedOver(e, ns, hop, admin, before, "UpgradeWizard", string(before.Spec.Owner.UID))
	})
	t.Run("cli", func(t *testing.T) {
		e := newEnv(t)
		ns, catalog, _ := e.platform()
		// Not in a terminal, the CLI saves the run at its approval and
		// exits 4: the hop is unfinished, the CLI's.
		out, err := runBinary(e, "upgrade", "--catalog", catalog, "--to", "1.1.0", "--set", "approve=true", "--runs-namespace", e.runsNS)
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 4 {
			t.Fatalf("upshift upgrade did not stop at its approval (%v):\n%s", err, out)
		}
		s := e.serve("--catalog", catalog)
		admin := s.login(adminPassword)
		hop := ns + "-1.1.0"
		before := s.hopRun(hop, admin)
		if before.Spec.Owner != nil {
			t.Fatalf("the CLI's run %s records owner %v", hop, before.Spec.Owner)
		}
		s.refusedOver(e, ns, hop, admin, before, "the CLI")
	})
	t.Run("aborted", func(t *testing.T) {
		e := newEnv(t)
		ns, catalog, _ := e.platform()
		s := e.serve("--catalog", catalog)
		admin := s.login(adminPassword)
		hop := s.startWaiting(admin).Waiting.Run
		s.must(http.StatusOK, "POST", "/api/runs/"+hop+"/abort", admin, nil, nil)
		s.waitFor("/api/linux/upgrade/infra/status", admin, "the abort", func(p progress) bool { return p.Status.State == "Failed" })
		before := s.hopRun(hop, admin)
		// A new upgrade (to a further target: starting the failed one
		// again is the wizard's retry) stops at the aborted hop.
		s.must(http.StatusOK, "POST", "/api/linux/upgrade/infra/upgrade", admin,
			map[string]any{"targetVersion": "1.2.0", "values": map[string]string{"approve": "true"}}, nil)
		p := s.settled(hop, admin, before)
		if p.Status.State != "Failed" || !strings.Contains(p.Status.Description, "aborted by an operator") || !strings.Contains(p.Status.Description, hop) {
			t.Errorf("a new upgrade over the aborted hop %s: %+v (waiting %+v)", hop, p.Status, p.Waiting)
		}
		s.unchanged(e, ns, hop, admin, before)
		// The run's retry resumes it: it waits at its approval again.
		s.must(http.StatusAccepted, "POST", "/api/runs/"+hop+"/retry", admin, nil, nil)
		s.waitFor("/api/linux/upgrade/infra/status", admin, "the retry resuming "+hop, func(p progress) bool {
			return p.Waiting != nil && p.Waiting.Run == hop
		})
		if r := s.hopRun(hop, admin); r.Status.Phase != v1alpha1.RunRunning || r.Status.Transitions <= before.Status.Transitions {
			t.Errorf("after the retry run %s is %s at transition %d (was %d)", hop, r.Status.Phase, r.Status.Transitions, before.Status.Transitions)
		}
	})
}

// refusedOver starts the wizard's upgrade to the hop's version over
// another owner's unfinished run of it: the upgrade fails naming the run
// and the owner (each of owner's strings), and the run is left as it was.
func (s *server) refusedOver(e *env, ns, hop, token string, before *v1alpha1.UpgradeRun, owner ...string) {
	s.t.Helper()
	s.must(http.StatusOK, "POST", "/api/linux/upgrade/infra/upgrade", token,
		map[string]any{"targetVersion": "1.1.0", "values": map[string]string{"approve": "true"}}, nil)
	p := s.settled(hop, token, before)
	if r := s.hopRun(hop, token); r.Status.Transitions != before.Status.Transitions {
		s.t.Fatalf("the wizard's upgrade resumed %s's run %s (transition %d, was %d): %+v\nserver log:\n%s", owner[0], hop, r.Status.Transitions, before.Status.Transitions, p.Status, s.log)
	}
	if p.Status.State != "Failed" || !strings.Contains(p.Status.Description, hop) {
		s.t.Fatalf("the wizard's upgrade over %s's run %s: %+v\nserver log:\n%s", owner[0], hop, p.Status, s.log)
	}
	for _, o := range owner {
		if !strings.Contains(p.Status.Description, o) {
			s.t.Errorf("the refusal does not name the run's owner (%s): %s", o, p.Status.Description)
		}
	}
	s.unchanged(e, ns, hop, token, before)
}

// settled waits until the infrastructure upgrade ended or drove the hop's
// run on (a resume saves a transition), and returns its status. Waiting
// alone tells nothing: the status shows the planned hop's run as it is,
// whoever drives it.
func (s *server) settled(hop, token string, before *v1alpha1.UpgradeRun) progress {
	s.t.Helper()
	return s.waitFor("/api/linux/upgrade/infra/status", token, "the upgrade to end or drive "+hop, func(p progress) bool {
		return p.Status.State != "Running" || s.hopRun(hop, token).Status.Transitions != before.Status.Transitions
	})
}

// unchanged fails unless the hop's run is as before (its phase, step and
// transitions, its owner) and the platform still says 1.0.0.
func (s *server) unchanged(e *env, ns, hop, token string, before *v1alpha1.UpgradeRun) {
	s.t.Helper()
	r := s.hopRun(hop, token)
	if r.Status.Phase != before.Status.Phase || r.Status.Step != before.Status.Step || r.Status.Transitions != before.Status.Transitions {
		s.t.Errorf("run %s was driven: %s at %s, transition %d; was %s at %s, transition %d",
			hop, r.Status.Phase, r.Status.Step, r.Status.Transitions, before.Status.Phase, before.Status.Step, before.Status.Transitions)
	}
	if r.Spec.Owner.String() != before.Spec.Owner.String() || (r.Spec.Owner != nil && r.Spec.Owner.UID != before.Spec.Owner.UID) {
		s.t.Errorf("run %s's owner changed: %v, was %v", hop, r.Spec.Owner, before.Spec.Owner)
	}
	if v := e.version(ns); v != "1.0.0" {
		s.t.Errorf("the platform says %s, want 1.0.0: the hop was driven", v)
	}
}

// stop ends the server as an operator does (SIGTERM): the hop it drives
// is saved where it stood, unfinished, and its lease released.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		s.t.Fatalf("upshift serve did not stop on SIGTERM:\n%s", s.log)
	}
}

// hopRun is the run as the API shows it.
func (s *server) hopRun(name, token string) *v1alpha1.UpgradeRun {
	s.t.Helper()
	var d struct {
		Run *v1alpha1.UpgradeRun `json:"run"`
	}
	s.must(http.StatusOK, "GET", "/api/runs/"+name, token, nil, &d)
	if d.Run == nil {
		s.t.Fatalf("GET /api/runs/%s: no run", name)
	}
	return d.Run
}
