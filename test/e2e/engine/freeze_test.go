package engine_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// frozenNamespace is where the freeze plans deny creating ConfigMaps, as a
// platform's upgrade would deny Liqo's new peerings.
const (
	frozenNamespace = "peers"
	freezeMessage   = "peerings are frozen while the platform upgrades"
)

// freezePlan: a stage that freezes the creation of ConfigMaps in
// frozenNamespace (then, with approval, waits for an operator), and a
// stage that sets web's image.
func (w *world) freezePlan(name, webTag string, approval bool, autoRollback bool) string {
	dir := w.t.TempDir()
	wait := ""
	if approval {
		wait = "\n    - name: go-ahead\n      approval: {message: check the peerings}"
	}
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: %s}
spec:
  version: 2.0.0
  autoRollback: %v
  stages:
  - name: hold
    steps:
    - name: freeze
      freeze:
        rules: [{apiGroups: [""], resources: [configmaps], operations: [CREATE]}]
        namespaces: [%s]
        message: %s%s
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:%s"}}
`, name, autoRollback, frozenNamespace, freezeMessage, wait, webTag))
	return filepath.Join(dir, "plan.yaml")
}

// freezeWorld is a world with the platform installed and the namespace
// the plans freeze.
func freezeWorld(t *testing.T) *world {
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	if _, err := w.cs.CoreV1().Namespaces().Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: frozenNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return w
}

var configMapsMade atomic.Int64

// createConfigMap creates a ConfigMap of a new name in ns, as a user would.
func (w *world) createConfigMap(ns string) error {
	name := "user-" + strconv.FormatInt(configMapsMade.Add(1), 10)
	_, err := w.cs.CoreV1().ConfigMaps(ns).Create(w.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	return err
}

// assertFrozen: creating a ConfigMap in the frozen namespace is denied,
// with the plan's message, at once (the step waited until the freeze was
// enforced); elsewhere it is not.
func (w *world) assertFrozen(when string) {
	w.t.Helper()
	err := w.createConfigMap(frozenNamespace)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), freezeMessage) {
		w.t.Fatalf("%s: creating a ConfigMap in %s: %v; want denied with %q", when, frozenNamespace, err, freezeMessage)
	}
	if err := w.createConfigMap("shop"); err != nil {
		w.t.Fatalf("%s: creating a ConfigMap in shop (not frozen): %v", when, err)
	}
}

// assertLifted: no freeze policy or binding is left, and creating a
// ConfigMap in the frozen namespace works at once.
func (w *world) assertLifted(when string) {
	w.t.Helper()
	policies, err := w.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(w.ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	bindings, err := w.cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(w.ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	var left []string
	for _, p := range policies.Items {
		left = append(left, "policy "+p.Name)
	}
	for _, b := range bindings.Items {
		left = append(left, "binding "+b.Name)
	}
	if len(left) > 0 {
		w.t.Fatalf("%s: freeze left behind: %s", when, strings.Join(left, ", "))
	}
	if err := w.createConfigMap(frozenNamespace); err != nil {
		w.t.Fatalf("%s: creating a ConfigMap in %s after the freeze was lifted: %v", when, frozenNamespace, err)
	}
}

// TestFreezeHoldsUntilTheRunSucceeds: `upshift plan` shows the policy and
// binding to be created; while the run waits at its approval the freeze
// denies, with the plan's message, and only what it names; once the run
// succeeds it is gone.
func TestFreezeHoldsUntilTheRunSucceeds(t *testing.T) {
	t.Parallel()
	w := freezeWorld(t)
	plan := w.freezePlan("shop-2.0.0", "2.0.0", true, true)
	pv := w.mustExit(0, nil, "plan", "-f", plan)
	mustContain(t, "plan", pv.stdout,
		"step freeze: freeze CREATE of configmaps in namespaces peers until the run ends",
		"create validatingadmissionpolicy upshift-freeze-shop-2-0-0-freeze-",
		"create validatingadmissionpolicybinding upshift-freeze-shop-2-0-0-freeze-",
		"deleted when the run ends")
	w.assertLifted("before the run")

	w.mustExit(4, nil, "apply", "-f", plan, "--no-wait")
	w.assertFrozen("while the run waits for its approval")
	w.mustExit(0, nil, "approve", "shop-2.0.0")
	w.mustExit(0, nil, "apply", "-f", plan, "--no-wait")
	if run := w.run("shop-2.0.0"); run.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("run %s", run.Status.Phase)
	}
	w.assertLifted("after the run succeeded")
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")
}

// TestFreezeLiftedWhenTheRunFails: a run that rolls back lifts the freeze
// (its stage's restore deletes it); a run that fails without rollback
// lifts it too (it waits for an operator, who may take days), and so
// does the operator's rollback after it.
func TestFreezeLiftedWhenTheRunFails(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		autoRollback bool
	}{{"rolls back", true}, {"stops for an operator", false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := freezeWorld(t)
			plan := w.freezePlan("shop-2.0.0", "2.0.0-broken", true, c.autoRollback)
			w.mustExit(4, nil, "apply", "-f", plan, "--no-wait")
			w.assertFrozen("while the run waits for its approval")
			w.mustExit(0, nil, "approve", "shop-2.0.0")
			if c.autoRollback {
				w.mustExit(2, nil, "apply", "-f", plan, "--no-wait")
				if run := w.run("shop-2.0.0"); run.Status.Phase != v1alpha1.RunRolledBack || run.Status.Stages[0].Phase != v1alpha1.PhaseRolledBack {
					t.Fatalf("run %s, stage hold %s; want both rolled back", run.Status.Phase, run.Status.Stages[0].Phase)
				}
				w.assertLifted("after the rollback")
				return
			}
			w.mustExit(3, nil, "apply", "-f", plan, "--no-wait")
			if run := w.run("shop-2.0.0"); run.Status.Phase != v1alpha1.RunFailed {
				t.Fatalf("run %s, want Failed", run.Status.Phase)
			}
			w.assertLifted("after the run failed")
			w.mustExit(0, nil, "rollback", "shop-2.0.0")
			w.assertLifted("after the operator's rollback")
		})
	}
}

// TestFreezeLiftedOnAbortAndBackOnResume: an aborted run lifts its
// freeze; resumed, the freeze holds again for the rest of the run, and is
// lifted at its end.
func TestFreezeLiftedOnAbortAndBackOnResume(t *testing.T) {
	t.Parallel()
	w := freezeWorld(t)
	plan := w.freezePlan("shop-2.0.0", "2.0.0", true, true)
	w.mustExit(4, nil, "apply", "-f", plan, "--no-wait")
	w.assertFrozen("while the run waits for its approval")
	w.mustExit(4, nil, "abort", "shop-2.0.0")
	if run := w.run("shop-2.0.0"); run.Status.Phase != v1alpha1.RunAborted {
		t.Fatalf("run %s, want Aborted", run.Status.Phase)
	}
	w.assertLifted("after the abort")

	r := w.mustExit(4, nil, "apply", "-f", plan, "--no-wait")
	mustContain(t, "resumed apply", r.stderr+r.stdout, "step freeze again: frozen until the run ends")
	w.assertFrozen("resumed, while the run waits again")
	w.mustExit(0, nil, "approve", "shop-2.0.0")
	w.mustExit(0, nil, "apply", "-f", plan, "--no-wait")
	w.assertLifted("after the resumed run succeeded")
}

// TestFreezeCrashAtEveryTransition kills `upshift apply` (SIGKILL) right
// after each save of a freeze plan's run, of one that succeeds and of one
// that rolls back, and once right after the freeze step's first write:
// while the killed run is unfinished its freeze holds (the run is not
// over), a run saved as ended never holds one, and `apply` again reaches
// the end with nothing left behind.
func TestFreezeCrashAtEveryTransition(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		broken bool
	}{{"succeeds", false}, {"rolls back", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := freezeWorld(t)
			wantCode, wantPhase, tag := 0, v1alpha1.RunSucceeded, "2.0.%d"
			if c.broken {
				wantCode, wantPhase, tag = 2, v1alpha1.RunRolledBack, "2.0.%d-broken"
			}
			plan := func(n int) (string, string) {
				name := fmt.Sprintf("freeze-%d", n)
				return name, w.freezePlan(name, fmt.Sprintf(tag, n), false, true)
			}
			var kills, holding, endedAtKill int
			resume := func(n int, name, file string, atKill *v1alpha1.UpgradeRun) {
				t.Helper()
				kills++
				if freeze := stepStatus(atKill, "freeze"); freeze.Phase == v1alpha1.PhaseSucceeded && !ended(atKill.Status.Phase) {
					holding++
					w.assertFrozen(fmt.Sprintf("killed after transition %d, run %s", n, atKill.Status.Phase))
				}
				if ended(atKill.Status.Phase) {
					endedAtKill++
					w.assertLifted(fmt.Sprintf("killed after transition %d, run saved %s", n, atKill.Status.Phase))
				}
				r := w.mustExit(wantCode, nil, append([]string{"apply", "-f", file}, fastLease...)...)
				if final := w.run(name); final.Status.Phase != wantPhase {
					t.Fatalf("kill after %d: resumed run ended %s, want %s\n%s", n, final.Status.Phase, wantPhase, r)
				}
				w.assertLifted(fmt.Sprintf("killed after transition %d, resumed to the end", n))
			}

			name, file := plan(0)
			w.mustExit(wantCode, nil, append([]string{"apply", "-f", file}, fastLease...)...)
			w.assertLifted("after the uninterrupted run")
			total := w.run(name).Status.Transitions
			if total < 6 {
				t.Fatalf("only %d transitions in the reference run", total)
			}
			// Up to the last save: the one that ends the run.
			for n := 1; n <= total; {
				name, file := plan(n)
				killed := w.upshift([]string{runner.KillAfterTransitionEnv + "=" + strconv.Itoa(n)}, append([]string{"apply", "-f", file}, fastLease...)...)
				if killed.code != -9 {
					t.Fatalf("kill after transition %d: want SIGKILL, got %s", n, killed)
				}
				atKill := w.run(name)
				resume(n, name, file, atKill)
				n = atKill.Status.Transitions + 1
			}

			name, file = plan(total + 1)
			killed := w.upshift([]string{runner.KillAfterStepWriteEnv + "=freeze"}, append([]string{"apply", "-f", file}, fastLease...)...)
			if killed.code != -9 {
				t.Fatalf("kill after the freeze step's first write: want SIGKILL, got %s", killed)
			}
			// The step starts while the save of its Begin is in flight:
			// the kill may come before that save lands (Pending) or
			// after (Running); never after its completion was saved.
			atKill := w.run(name)
			if st := stepStatus(atKill, "freeze"); st.Phase != v1alpha1.PhaseRunning && st.Phase != v1alpha1.PhasePending {
				t.Fatalf("at the kill, step freeze is %s; want Running or Pending (its completion not saved)", st.Phase)
			}
			resume(-1, name, file, atKill)
			t.Logf("%d kills of %d transitions: %d with the freeze holding, %d with the run saved as ended", kills, total, holding, endedAtKill)
			if holding == 0 || endedAtKill == 0 {
				t.Error("no kill left the freeze holding, or none came after the run's last save: the test did not check both")
			}
		})
	}
}

// ended mirrors the runner's rule: a run in any other phase than these
// no longer moves by itself.
func ended(p v1alpha1.RunPhase) bool {
	return p != v1alpha1.RunPending && p != v1alpha1.RunRunning && p != v1alpha1.RunRollingBack
}
