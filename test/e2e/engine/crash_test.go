package engine_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// Short leases so a killed holder's lease expires quickly.
var fastLease = []string{"--lease-duration", "2s", "--lease-renew", "500ms"}

// stepObjects maps the upgrade plan's steps to the object each writes.
var stepObjects = map[string]string{
	"settings": "configmaps shop/settings",
	"web":      "deployments shop/web",
	"agent":    "daemonsets shop/agent",
}

// TestCrashAndResumeAtEveryTransition kills `upshift apply` (SIGKILL, via
// the test failpoint) right after each save of its transitions, of a run that
// succeeds and of one that fails and rolls back; `apply` again must reach
// the same end as an uninterrupted run, and no step recorded as succeeded
// before the kill may write again after it.
func TestCrashAndResumeAtEveryTransition(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		broken bool
	}{{"succeeds", false}, {"rolls back", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, localcluster.Options{})
			w.installPlatform()
			wantCode := 0
			if c.broken {
				wantCode = 2
			}
			// The uninterrupted run says how many transitions there are.
			ref := w.crashPlan(0, c.broken)
			w.mustExit(wantCode, nil, append([]string{"apply", "-f", ref}, fastLease...)...)
			total := w.run(fmt.Sprintf("shop-%d", 0)).Status.Transitions
			if total < 10 {
				t.Fatalf("only %d transitions in the reference run", total)
			}
			// n is the first transition not yet killed after; the save
			// that holds it may hold the next one too, so the next
			// kill comes after the transitions this one saved.
			for n := 1; n < total; {
				before := w.capture()
				name := fmt.Sprintf("shop-%d", n)
				plan := w.crashPlan(n, c.broken)
				killed := w.upshift([]string{runner.KillAfterTransitionEnv + "=" + strconv.Itoa(n)}, append([]string{"apply", "-f", plan}, fastLease...)...)
				if killed.code != -9 {
					t.Fatalf("kill after transition %d: want SIGKILL, got %s", n, killed)
				}
				atKill := w.run(name)
				next := atKill.Status.Transitions + 1
				resumedAt := time.Now()
				r := w.mustExit(wantCode, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
				final := w.run(name)
				want := v1alpha1.RunSucceeded
				if c.broken {
					want = v1alpha1.RunRolledBack
				}
				if final.Status.Phase != want {
					t.Fatalf("kill after %d: resumed run ended %s, want %s\n%s", n, final.Status.Phase, want, r)
				}
				if c.broken {
					w.assertRestored(before)
				} else {
					w.waitImages("app=web", "app", fmt.Sprintf("example.com/shop/web:2.0.%d", n))
					w.waitImages("app=agent", "agent", fmt.Sprintf("example.com/shop/agent:2.0.%d", n))
				}
				w.assertNotRepeated(t, n, atKill, resumedAt)
				n = next
			}
		})
	}
}

// crashPlan is the upgrade plan of iteration n: a new name and new tags,
// so each iteration changes something.
func (w *world) crashPlan(n int, broken bool) string {
	tag := fmt.Sprintf("2.0.%d", n)
	webTag := tag
	if broken {
		webTag += "-broken"
	}
	return w.upgradePlan(planOptions{name: fmt.Sprintf("shop-%d", n), webTag: webTag, agentTag: tag})
}

// assertNotRepeated fails if a step that had succeeded when the process
// was killed wrote its object again after the resume began (the rollback's
// restores are not step writes: a rolled-back run restores on purpose).
func (w *world) assertNotRepeated(t *testing.T, n int, atKill *v1alpha1.UpgradeRun, resumedAt time.Time) {
	t.Helper()
	done := map[string]bool{}
	for _, st := range atKill.Status.Stages {
		for _, s := range st.Steps {
			if s.Phase == v1alpha1.PhaseSucceeded {
				done[stepObjects[s.Name]] = true
			}
		}
	}
	for _, e := range w.upshiftWrites() {
		if e.RequestReceivedTimestamp.Before(resumedAt) || e.Verb != "patch" {
			continue // restores use update; steps use server-side apply (patch)
		}
		if done[e.Object()] {
			t.Errorf("kill after %d: the succeeded step's object %s was patched again after the resume", n, e.Object())
		}
	}
}

// TestCrashDuringBackupWrite kills `upshift apply` after it wrote the first
// chunk of the workloads stage's backup, before the backup was verified and
// recorded: the next `apply` writes the backup again, verifies it, and
// reaches the target; the recorded backup restores correctly on rollback.
func TestCrashDuringBackupWrite(t *testing.T) {
	t.Parallel()
	w, before, plan := brokenWebWithoutRollback(t)
	killed := w.upshift([]string{runner.KillDuringBackupEnv + "=workloads"}, append([]string{"apply", "-f", plan}, fastLease...)...)
	if killed.code != -9 {
		t.Fatalf("want SIGKILL during the backup, got %s", killed)
	}
	atKill := w.run("shop-2.0.0")
	// The backup starts while its Begin is saved: the kill may come
	// before that save lands (the stage still Pending) or after.
	if st := atKill.Status.Stages[1]; st.Backup != nil || st.Phase != v1alpha1.PhaseBackingUp && st.Phase != v1alpha1.PhasePending {
		t.Fatalf("at the kill the workloads stage should be backing up (or about to) with no backup recorded: %s backup=%v", st.Phase, st.Backup)
	}
	if img := w.capture().web.Spec.Template.Spec.Containers[0].Image; img != before.web.Spec.Template.Spec.Containers[0].Image {
		t.Fatalf("web changed before its stage's backup was recorded: %s", img)
	}
	// The resumed run backs up again, then fails (broken web) and stops
	// for an operator; the rollback restores from the re-written backup.
	w.mustExit(3, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	run := w.run("shop-2.0.0")
	if b := run.Status.Stages[1].Backup; b == nil || len(b.Secrets) == 0 {
		t.Fatalf("no backup recorded for workloads after the resume")
	}
	w.mustExit(0, nil, "rollback", "shop-2.0.0")
	w.assertRestored(before)
}

// TestStepStartedBeforeItsBackupWasRecorded: a step starts while the save
// recording its stage's backup is in flight. Killed after the step's
// first write and before that save landed, the run resumes with the
// backup taken before the step (found in the cluster), not a new one that
// would hold the step's change: the rollback restores web as it was.
func TestStepStartedBeforeItsBackupWasRecorded(t *testing.T) {
	t.Parallel()
	w, before, plan := killedAfterWebsWriteBeforeItsBackupIsRecorded(t)
	w.mustExit(3, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	w.mustExit(0, nil, "rollback", "shop-2.0.0")
	w.assertRestored(before)
}

// TestRollbackOfARunKilledWhileBackingUp: killed as above, the run is
// rolled back at once (no apply in between). The saved run shows the
// workloads stage not yet begun, with no backup recorded; the
// rollback finds the backup in the cluster and restores web, which the
// step had already changed, instead of leaving it and saying restored.
func TestRollbackOfARunKilledWhileBackingUp(t *testing.T) {
	t.Parallel()
	w, before, _ := killedAfterWebsWriteBeforeItsBackupIsRecorded(t)
	out := w.mustExit(0, nil, "rollback", "shop-2.0.0")
	if !strings.Contains(out.stdout+out.stderr, "taken before the run stopped") {
		t.Errorf("the rollback does not say it found the stage's backup:\n%s", out)
	}
	w.assertRestored(before)
}

// TestResumeStopsOnACorruptBackupItCannotAdopt: killed as above, the
// stage's backup in the cluster is then damaged. Going on would take a
// new backup holding the step's change, and failing the stage would roll
// back the others and say restored while web keeps that change: apply
// and rollback both stop instead, change nothing, and name the backup's
// Secrets and the way out.
func TestResumeStopsOnACorruptBackupItCannotAdopt(t *testing.T) {
	t.Parallel()
	w, _, plan := killedAfterWebsWriteBeforeItsBackupIsRecorded(t)
	atKill := w.capture()
	secrets, err := w.cs.CoreV1().Secrets("upshift-system").List(w.ctx, metav1.ListOptions{LabelSelector: backup.LabelStage + "=workloads"})
	if err != nil || len(secrets.Items) == 0 {
		t.Fatalf("the workloads stage's backup is not in the cluster (%v)", err)
	}
	sec := secrets.Items[0]
	sec.Data["chunk"] = append([]byte("damaged"), sec.Data["chunk"]...)
	if _, err := w.cs.CoreV1().Secrets(sec.Namespace).Update(w.ctx, &sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{append([]string{"apply", "-f", plan}, fastLease...), {"rollback", "shop-2.0.0"}} {
		out := w.upshift(nil, args...)
		if out.code == 0 {
			t.Fatalf("%s went on past a corrupt backup:\n%s", args[0], out)
		}
		if msg := out.stdout + out.stderr; !strings.Contains(msg, "kubectl delete secrets -n upshift-system -l ") || !strings.Contains(msg, "upshift.dev/stage=workloads") || !strings.Contains(msg, "nothing was changed") {
			t.Errorf("%s does not name the damaged backup and the way out:\n%s", args[0], out)
		}
		if st := w.run("shop-2.0.0").Status.Stages[1]; st.Backup != nil || st.Phase != v1alpha1.PhasePending {
			t.Errorf("after %s the workloads stage is %s with backup %v: want it as saved at the kill", args[0], st.Phase, st.Backup)
		}
		if img, was := w.capture().web.Spec.Template.Spec.Containers[0].Image, atKill.web.Spec.Template.Spec.Containers[0].Image; img != was {
			t.Errorf("after %s web runs %s, at the kill %s: nothing was to change", args[0], img, was)
		}
	}
}

// killedAfterWebsWriteBeforeItsBackupIsRecorded runs the broken plan with
// slow saves and kills it right after web's first write: the saved run
// shows the workloads stage pending, its backup taken but not
// recorded, and web changed.
func killedAfterWebsWriteBeforeItsBackupIsRecorded(t *testing.T) (*world, capture, string) {
	w, before, plan := brokenWebWithoutRollback(t)
	env := []string{runner.KillAfterStepWriteEnv + "=web", runner.SlowSavesEnv + "=2s"}
	killed := w.upshift(env, append([]string{"apply", "-f", plan}, fastLease...)...)
	if killed.code != -9 {
		t.Fatalf("want SIGKILL after web's first write, got %s", killed)
	}
	// The backup's record was to be in flight. Mostly the backup lands
	// within the driver's quick window and the stage was never saved as
	// backing up (pending); on a loaded machine its start was saved
	// alone first (backing up). Either way no backup is recorded, and
	// the resumed run must find it (engine.Sought names both).
	if st := w.run("shop-2.0.0").Status.Stages[1]; st.Backup != nil || st.Phase != v1alpha1.PhasePending && st.Phase != v1alpha1.PhaseBackingUp {
		t.Fatalf("at the kill the workloads stage is %s with backup %v: want it pending or backing up, its backup not recorded (the save was to be in flight)", st.Phase, st.Backup)
	}
	if img := w.capture().web.Spec.Template.Spec.Containers[0].Image; img == before.web.Spec.Template.Spec.Containers[0].Image {
		t.Fatalf("web is unchanged at the kill (%s): the step was to have written", img)
	}
	return w, before, plan
}

// brokenWebWithoutRollback installs the platform on a fresh cluster and
// writes the plan that breaks web and stops for an operator instead of
// rolling back: what the crash tests kill and then roll back by hand.
func brokenWebWithoutRollback(t *testing.T) (*world, capture, string) {
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()
	no := false
	return w, before, w.upgradePlan(planOptions{webTag: "2.0.0-broken", autoRollback: &no})
}
