package engine_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// nextPlan upgrades web, then agent, then the settings, one stage each:
// agent's stage is backed up while web's rolls out and soaks, and the
// settings' while agent's does. soak is web's stage's soak gate ("" for
// none).
func nextPlan(t *testing.T, soak string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {level: \"2\"}\n")
	gates := "    gates:\n    - ready: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}\n"
	if soak != "" {
		gates += "    - soak: {duration: " + soak + "}\n"
	}
	plan := filepath.Join(dir, "plan.yaml")
	write(t, plan, `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  autoRollback: false
  stages:
  - name: web
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.0"}}
`+gates+`  - name: agent
    steps:
    - name: agent
      image: {kind: DaemonSet, namespace: shop, name: agent, images: {agent: "example.com/shop/agent:2.0.0"}}
  - name: settings
    steps:
    - name: settings
      manifests: {path: settings.yaml}
`)
	return plan
}

// The backup of a stage that follows one of image steps is taken while
// those roll out, and is the stage's backup when its turn comes: the run
// says so, and the audit log shows it written before web's rollout ended.
// The image steps check their pods, and the ready gate after one its
// workload, without a list of their own.
func TestNextStageIsBackedUpWhileImagesRollOut(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	out := w.mustExit(0, nil, "apply", "-f", nextPlan(t, ""))
	for _, during := range []string{"web", "agent"} {
		if !strings.Contains(out.stdout+out.stderr, "taken while stage "+during+" ran") {
			t.Errorf("apply does not say a backup was taken while stage %s ran:\n%s", during, out)
		}
	}
	time.Sleep(time.Second) // let the audit log's last batch land
	events, err := w.c.ReadAudit()
	if err != nil {
		t.Fatal(err)
	}
	// The backup's read-back of its Secret ends its save; the rollout's
	// last status update by the controller ends the rollout.
	var agentBackup, webRolledOut time.Time
	for _, e := range events {
		r := e.ObjectRef
		switch {
		case r == nil:
		case e.User.Username == upshiftUser && e.Verb == "get" && agentBackup.IsZero() && strings.Contains(e.RequestURI, "/secrets/upshift-backup-shop-2-0-0-agent-1-"):
			agentBackup = e.RequestReceivedTimestamp
		case r.Resource == "deployments" && r.Subresource == "status" && r.Name == "web" && e.User.Username != upshiftUser:
			if t := e.RequestReceivedTimestamp; t.After(webRolledOut) {
				webRolledOut = t
			}
		}
	}
	// The image steps judged their pods from the run's informer, which
	// their rollouts' waits read, and web's ready gate fenced on the
	// step's write: no list of their own.
	for _, e := range localcluster.ByUser(events, upshiftUser) {
		if e.Verb == "list" && e.ObjectRef != nil && e.ObjectRef.Resource == "pods" && strings.Contains(e.RequestURI, "labelSelector=") {
			t.Errorf("an image step listed its pods after its rollout (%s): want them judged from the run's informer", e.RequestURI)
		}
		if e.Verb == "list" && e.ObjectRef != nil && e.ObjectRef.Resource == "deployments" && strings.Contains(e.RequestURI, "fieldSelector=metadata.name%3Dweb") {
			t.Errorf("web's ready gate listed web (%s): want it fenced on its stage's write", e.RequestURI)
		}
	}
	if agentBackup.IsZero() || webRolledOut.IsZero() {
		t.Fatalf("the audit log lacks agent's backup (%v) or web's rollout (%v)", agentBackup, webRolledOut)
	}
	if !agentBackup.Before(webRolledOut) {
		t.Errorf("agent's backup was written at %s, after web's rollout ended at %s: want it written while web rolled out", agentBackup.Format(time.StampMicro), webRolledOut.Format(time.StampMicro))
	}
	w.waitImages("app=agent", "agent", "example.com/shop/agent:2.0.0")
}

// An object that moves after its stage's next backup was taken (another
// manager writes it while the stage before soaks) makes that backup
// unusable: the stage takes its backup afresh at its turn, holding the
// other manager's change, so a rollback would not undo it.
func TestNextBackupOfAMovedObjectIsTakenAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	cmd := w.command(nil, "apply", "-f", nextPlan(t, "4s"))
	var stdout strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.waitUnclaimedBackup("agent")
	patch := `{"metadata":{"annotations":{"team.example.com/owner":"payments"}}}`
	if _, err := w.cs.AppsV1().DaemonSets("shop").Patch(w.ctx, "agent", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "operator-kubectl"}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("apply: %v\n%s", err, stdout.String())
	}
	if strings.Contains(stdout.String(), "taken while stage web ran") {
		t.Errorf("stage agent used the backup taken while web ran, though agent moved since:\n%s", stdout.String())
	}
	shown := w.mustExit(0, nil, "backup", "show", "shop-2.0.0", "--stage", "agent", "-o", "json")
	if !strings.Contains(shown.stdout, "team.example.com/owner") {
		t.Errorf("agent's backup lacks the change another manager made before the stage began:\n%s", shown.stdout)
	}
}

// Killed after agent's step wrote, with the record of its stage's start
// still in flight (so the saved run shows the stage pending), the run is
// rolled back: the rollback finds the next backup the stage claimed and
// restores agent from it.
func TestClaimedNextBackupIsAdoptedAfterAKill(t *testing.T) {
	t.Parallel()
	w, before, _ := killedAfterAgentsWrite(t)
	out := w.mustExit(0, nil, "rollback", "shop-2.0.0")
	if !strings.Contains(out.stdout+out.stderr, "taken before the run stopped") {
		t.Errorf("the rollback does not say it found stage agent's backup:\n%s", out)
	}
	if got, want := w.capture().agent.Spec.Template.Spec.Containers[0].Image, before.agent.Spec.Template.Spec.Containers[0].Image; got != want {
		t.Errorf("after the rollback agent runs %s, want %s", got, want)
	}
}

// Killed as above, the run is applied again: it goes on with agent's
// stage from the backup agent's step began with, and does not run web's
// stage again (whose end the killed process had not saved): web's step
// would otherwise write after agent's had.
func TestResumeAfterAKillGoesOnFromTheClaimedBackup(t *testing.T) {
	t.Parallel()
	w, _, plan := killedAfterAgentsWrite(t)
	killedAt := time.Now()
	out := w.mustExit(0, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	if !strings.Contains(out.stdout+out.stderr, "taken before the run stopped") {
		t.Errorf("the resumed run does not say it found stage agent's backup:\n%s", out)
	}
	st := w.run("shop-2.0.0").Status
	if st.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("the resumed run is %s: %s", st.Phase, st.Message)
	}
	if msg := st.Stages[0].Steps[0].Message; !strings.Contains(msg, "succeeded before the run stopped") {
		t.Errorf("web's step says %q: want it recorded as succeeded before the stop", msg)
	}
	time.Sleep(time.Second) // let the audit log's last batch land
	for _, e := range w.upshiftWrites() {
		if r := e.ObjectRef; r != nil && r.Resource == "deployments" && r.Name == "web" && e.RequestReceivedTimestamp.After(killedAt) {
			t.Errorf("the resumed run wrote deployment web again (%s %s): want web's stage left as the killed process finished it", e.Verb, e.RequestURI)
		}
	}
	w.waitImages("app=agent", "agent", "example.com/shop/agent:2.0.0")
}

// killedAfterAgentsWrite applies nextPlan with slow saves and kills it
// right after agent's step first wrote: agent's stage began with the
// backup taken while web's ran, claimed; the saved run shows it pending
// and web's step still running (their ends were in the save in flight).
func killedAfterAgentsWrite(t *testing.T) (*world, capture, string) {
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	before := w.capture()
	plan := nextPlan(t, "")
	env := []string{runner.KillAfterStepWriteEnv + "=agent", runner.SlowSavesEnv + "=2s"}
	killed := w.upshift(env, append([]string{"apply", "-f", plan}, fastLease...)...)
	if killed.code != -int(syscall.SIGKILL) {
		t.Fatalf("want SIGKILL after agent's first write, got %s", killed)
	}
	if st := w.run("shop-2.0.0").Status.Stages; st[1].Backup != nil || st[1].Phase != v1alpha1.PhasePending || st[0].Phase == v1alpha1.PhaseSucceeded {
		t.Fatalf("at the kill stage web is %s, stage agent %s with backup %v: want web not saved as done, agent pending without its backup recorded", st[0].Phase, st[1].Phase, st[1].Backup)
	}
	time.Sleep(time.Second) // let the audit log's last batch land
	claimed := false
	for _, e := range w.upshiftWrites() {
		claimed = claimed || (e.Verb == "patch" && strings.Contains(e.RequestURI, "/secrets/upshift-backup-shop-2-0-0-agent-1-"))
	}
	if !claimed {
		t.Fatalf("stage agent did not claim a backup taken while the stage before ran: the test would not cover that path")
	}
	return w, before, plan
}

// Killed while web soaks, after agent's next backup was saved but
// before any stage claimed it, the run resumes: the unclaimed backup is
// not adopted, and agent's stage, at its turn, backs up what agent is
// then (another manager changed it in between).
func TestUnclaimedNextBackupIsNotAdopted(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	plan := nextPlan(t, "6s")
	cmd := w.command(nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.waitUnclaimedBackup("agent")
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	patch := `{"metadata":{"annotations":{"team.example.com/owner":"payments"}}}`
	if _, err := w.cs.AppsV1().DaemonSets("shop").Patch(w.ctx, "agent", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "operator-kubectl"}); err != nil {
		t.Fatal(err)
	}
	// Resumed, the soak goes on from its first start: seconds left.
	out := w.mustExit(0, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	if strings.Contains(out.stdout+out.stderr, "taken before the run stopped") {
		t.Errorf("the resumed run adopted a backup no stage began with:\n%s", out)
	}
	shown := w.mustExit(0, nil, "backup", "show", "shop-2.0.0", "--stage", "agent", "-o", "json")
	var stages []struct {
		Objects []map[string]any `json:"objects"`
	}
	if err := json.Unmarshal([]byte(shown.stdout), &stages); err != nil || len(stages) != 1 {
		t.Fatalf("backup show: %v\n%s", err, shown.stdout)
	}
	if !strings.Contains(shown.stdout, "team.example.com/owner") {
		t.Errorf("agent's backup lacks the change made before its stage began:\n%s", shown.stdout)
	}
}

// waitUnclaimedBackup waits until the stage's backup is saved, unclaimed.
func (w *world) waitUnclaimedBackup(stage string) {
	w.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		list, err := w.cs.CoreV1().Secrets("upshift-system").List(w.ctx, metav1.ListOptions{LabelSelector: backup.LabelStage + "=" + stage})
		if err == nil {
			for _, s := range list.Items {
				if s.Annotations[backup.AnnotationUnclaimed] != "" {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.t.Fatalf("stage %s's backup was never saved unclaimed", stage)
}
