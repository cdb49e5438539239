package engine_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// defaultLeaseDuration is `--lease-duration`'s default, which the abort and
// interrupt tests keep so that a lease left behind would show as a wait.
const defaultLeaseDuration = 10 * time.Second

// TestAbortStopsARunAndRollbackStaysPossible: `upshift abort` stops a run
// another process drives (both exit 4), the run is saved as Aborted with
// its backups, and `upshift rollback` then restores everything.
func TestAbortStopsARunAndRollbackStaysPossible(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{PodReadyDelay: 3 * time.Second})
	w.installPlatform()
	before := w.capture()
	plan := w.upgradePlan(planOptions{})
	apply := w.startUpshift("apply", "-f", plan)
	w.waitStageRunning("shop-2.0.0", "workloads", apply)

	abortedAt := time.Now()
	ab := w.mustExit(4, nil, "abort", "shop-2.0.0")
	mustContain(t, "abort stderr", ab.stderr, "aborted", "upshift rollback shop-2.0.0")
	code := apply.wait(t, defaultLeaseDuration+5*time.Second-time.Since(abortedAt))
	if code != 4 {
		t.Fatalf("the aborted apply: want exit 4, got %d\n%s", code, apply.out)
	}
	t.Logf("the driving apply stopped %s after the abort began", time.Since(abortedAt).Round(time.Millisecond))
	mustContain(t, "aborted apply output", apply.out.String(), "aborted")

	run := w.run("shop-2.0.0")
	if run.Status.Phase != v1alpha1.RunAborted {
		t.Fatalf("after abort the run is %s, want Aborted (%s)", run.Status.Phase, run.Status.Message)
	}
	// The request was answered: left on the record, it would abort the
	// next resume of this run as soon as that drive polls for requests.
	if run.Status.AbortRequested {
		t.Errorf("the aborted run still records an abort request")
	}
	for _, st := range run.Status.Stages[:2] {
		if st.Backup == nil || len(st.Backup.Secrets) == 0 {
			t.Errorf("stage %s lost its backup on abort", st.Name)
		}
	}

	rb := w.mustExit(0, nil, "rollback", "shop-2.0.0")
	mustContain(t, "rollback output", rb.stdout, "RolledBack")
	w.assertRestored(before)
	if ph := w.run("shop-2.0.0").Status.Phase; ph != v1alpha1.RunRolledBack {
		t.Errorf("after rollback the run is %s, want RolledBack", ph)
	}
}

// TestRetryGoesOnFromTheFailedStep: a gate that fails without
// autoRollback stops the run (exit 3) naming `upshift retry`; once the
// cause is fixed, retry re-checks the gate and finishes the run without
// running any succeeded step again (judged by the audit log).
func TestRetryGoesOnFromTheFailedStep(t *testing.T) {
	t.Parallel()
	var healthy atomic.Bool
	var okAnswers atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(rw, r)
			return
		}
		if !healthy.Load() {
			http.Error(rw, "degraded", http.StatusServiceUnavailable)
			return
		}
		okAnswers.Add(1)
		_, _ = rw.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)

	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	no := false
	plan := w.upgradePlan(planOptions{autoRollback: &no, httpGate: srv.URL + "/healthz", gateTimeout: "3s"})
	r := w.mustExit(3, nil, "apply", "-f", plan)
	mustContain(t, "apply stderr", r.stderr, "NOT rolled back", "upshift retry shop-2.0.0")

	failed := w.run("shop-2.0.0")
	if failed.Status.Phase != v1alpha1.RunFailed {
		t.Fatalf("the run is %s, want Failed", failed.Status.Phase)
	}
	done := map[string]bool{}
	for _, st := range failed.Status.Stages {
		for _, s := range st.Steps {
			if s.Phase == v1alpha1.PhaseSucceeded {
				done[stepObjects[s.Name]] = true
			}
		}
	}
	for _, obj := range []string{"configmaps shop/settings", "deployments shop/web", "daemonsets shop/agent"} {
		if !done[obj] {
			t.Fatalf("before the retry, the step writing %s should have succeeded: %+v", obj, failed.Status.Stages)
		}
	}

	healthy.Store(true)
	retryBegan := time.Now()
	w.mustExit(0, nil, "retry", "shop-2.0.0")
	if okAnswers.Load() == 0 {
		t.Errorf("the retry did not check the http gate again")
	}
	if ph := w.run("shop-2.0.0").Status.Phase; ph != v1alpha1.RunSucceeded {
		t.Fatalf("after the retry the run is %s, want Succeeded", ph)
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")

	after := w.writesSince(retryBegan)
	for _, e := range after {
		if done[e.Object()] {
			t.Errorf("the retry wrote a succeeded step's object again: %s %s", e.Verb, e.Object())
		}
	}
}

// TestInterruptSavesAndResumes: SIGTERM stops `apply` (exit 4) with the
// run saved as it stood and the lease released, so the next `apply`
// resumes at once and reaches the target.
func TestInterruptSavesAndResumes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{PodReadyDelay: 3 * time.Second})
	w.installPlatform()
	plan := w.upgradePlan(planOptions{})
	apply := w.startUpshift("apply", "-f", plan)
	w.waitStageRunning("shop-2.0.0", "workloads", apply)

	if err := apply.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := apply.wait(t, 5*time.Second); code != 4 {
		t.Fatalf("after SIGTERM: want exit 4, got %d\n%s", code, apply.out)
	}
	mustContain(t, "interrupted apply output", apply.out.String(), "interrupted", "upshift apply -f", "resume")
	// The record says what happened; status says which command resumes.
	st := w.mustExit(0, nil, "status", "shop-2.0.0")
	mustContain(t, "status of the interrupted run", st.stdout, "interrupted",
		"next: not driven by any process: `upshift apply -f` with the same plan resumes it")

	run := w.run("shop-2.0.0")
	if run.Status.Phase != v1alpha1.RunRunning || !strings.Contains(run.Status.Message, "interrupted") {
		t.Errorf("after SIGTERM the run is %s (%q), want Running with a message saying it was interrupted", run.Status.Phase, run.Status.Message)
	}
	l, err := w.cs.CoordinationV1().Leases(runner.DefaultNamespace).Get(w.ctx, "upshift", metaGet)
	if err != nil {
		t.Fatalf("read the lease: %v", err)
	}
	if h := l.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("the interrupted apply did not release the lease: holder %q", *h)
	}

	// A released lease lets the next apply start driving at once; a lease
	// left behind would make it wait up to a lease duration.
	started := time.Now()
	again := w.mustExit(0, nil, "apply", "-f", plan)
	if strings.Contains(again.stdout+again.stderr, "lease held by") {
		t.Errorf("the resumed apply waited for a lease:\n%s", again)
	}
	first, err := firstLineTime(again.stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, again)
	}
	t.Logf("the resumed apply printed its first line %s after it started", first.Sub(started).Round(time.Millisecond))
	if d := first.Sub(started); d > 2*time.Second {
		t.Errorf("the resumed apply printed its first line %s after it started, want under 2s\n%s", d, again)
	}
	mustContain(t, "resumed apply", again.stdout, "resuming run shop-2.0.0")
	if ph := w.run("shop-2.0.0").Status.Phase; ph != v1alpha1.RunSucceeded {
		t.Fatalf("the resumed run ended %s", ph)
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")
	w.waitImages("app=agent", "agent", "example.com/shop/agent:2.0.0")
}

// TestOldRunsArePruned: with --keep-runs 2, each finished run past the last
// two is deleted with its backups.
func TestOldRunsArePruned(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	keep := []string{"--keep-runs", "2"}
	for i, name := range []string{"shop-a", "shop-b"} {
		tag := "2.0." + string(rune('1'+i))
		w.mustExit(0, nil, append([]string{"apply", "-f", w.upgradePlan(planOptions{name: name, webTag: tag, agentTag: tag})}, keep...)...)
	}
	// Before the third run, shop-a is kept with its backups: what must go.
	if rec, backups := w.runSecrets("shop-a"); rec == 0 || backups == 0 {
		t.Fatalf("before pruning, run shop-a should have its record and backups: %d record(s), %d backup Secret(s)", rec, backups)
	}
	w.mustExit(0, nil, append([]string{"apply", "-f", w.upgradePlan(planOptions{name: "shop-c", webTag: "2.0.3", agentTag: "2.0.3"})}, keep...)...)

	r := w.mustExit(0, nil, "history", "-o", "json")
	var runs []v1alpha1.UpgradeRun
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
		t.Fatalf("decode history: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, run := range runs {
		names = append(names, run.Name)
	}
	if strings.Join(names, ",") != "shop-b,shop-c" {
		t.Errorf("history lists %v, want [shop-b shop-c]", names)
	}
	for _, gone := range []string{"shop-1.0.0", "shop-a"} {
		if rec, backups := w.runSecrets(gone); rec+backups != 0 {
			t.Errorf("pruned run %s left %d record(s) and %d backup Secret(s)", gone, rec, backups)
		}
		if n := w.sourceChunks(gone); n != 0 {
			t.Errorf("pruned run %s left %d source chunk(s)", gone, n)
		}
	}
	for _, kept := range []string{"shop-b", "shop-c"} {
		if n := w.sourceChunks(kept); n == 0 {
			t.Errorf("kept run %s has no source chunk", kept)
		}
	}
	for _, kept := range []string{"shop-b", "shop-c"} {
		if rec, backups := w.runSecrets(kept); rec != 1 || backups == 0 {
			t.Errorf("kept run %s: %d record(s), %d backup Secret(s)", kept, rec, backups)
		}
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.3")
}

// sourceChunks counts the Secrets that hold the run's sources.
func (w *world) sourceChunks(run string) int {
	w.t.Helper()
	list, err := w.cs.CoreV1().Secrets(runner.DefaultNamespace).List(w.ctx, metav1.ListOptions{
		LabelSelector: runstore.LabelRun + "=" + run, FieldSelector: "type=" + runstore.SourcesSecretType})
	if err != nil {
		w.t.Fatal(err)
	}
	return len(list.Items)
}

// runSecrets counts the objects in upshift-system labelled with the run:
// run records (UpgradeRuns) and backup chunks (and any other Secret
// carrying the label, counted as a record so it cannot hide).
func (w *world) runSecrets(run string) (records, backups int) {
	w.t.Helper()
	runs, err := w.dyn.Resource(v1alpha1.GroupVersion.WithResource(runstore.Resource)).Namespace(runner.DefaultNamespace).List(w.ctx, metav1.ListOptions{LabelSelector: runstore.LabelRun + "=" + run})
	if err != nil {
		w.t.Fatal(err)
	}
	records = len(runs.Items)
	seen := map[string]bool{}
	for _, key := range []string{runstore.LabelRun, backup.LabelRun} {
		list, err := w.cs.CoreV1().Secrets(runner.DefaultNamespace).List(w.ctx, metav1.ListOptions{LabelSelector: key + "=" + run})
		if err != nil {
			w.t.Fatal(err)
		}
		for _, s := range list.Items {
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			switch s.Type {
			case backup.SecretType:
				backups++
			case runstore.SourcesSecretType:
				// The run's sources: part of its record, kept and pruned
				// with it (checked by prunedWithSources).
			default:
				records++
			}
		}
	}
	return records, backups
}

// writesSince are upshift's writes received at or after t; it waits until
// the audit log shows at least one, since the log is written
// asynchronously and every command saves its run.
func (w *world) writesSince(t time.Time) []localcluster.AuditEvent {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out []localcluster.AuditEvent
		for _, e := range w.upshiftWrites() {
			if !e.RequestReceivedTimestamp.Before(t) {
				out = append(out, e)
			}
		}
		if len(out) > 0 || time.Now().After(deadline) {
			time.Sleep(time.Second) // let the rest of the log land
			var all []localcluster.AuditEvent
			for _, e := range w.upshiftWrites() {
				if !e.RequestReceivedTimestamp.Before(t) {
					all = append(all, e)
				}
			}
			if len(all) == 0 {
				w.t.Fatalf("the audit log shows no write by upshift since %s", t.Format(time.RFC3339Nano))
			}
			return all
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// firstLineTime is the timestamp of the first plain progress line.
func firstLineTime(out string) (time.Time, error) {
	line, _, _ := strings.Cut(out, "\n")
	stamp, _, _ := strings.Cut(line, " ")
	ts, err := time.Parse("2006-01-02T15:04:05.000Z", stamp)
	if err != nil {
		return time.Time{}, errors.New("the output does not start with a timestamped line: " + err.Error())
	}
	return ts, nil
}

// background is an upshift process the test lets run while it acts.
type background struct {
	cmd  *exec.Cmd
	out  *testenv.SyncBuffer
	done chan struct{}
	code int
}

// startUpshift starts the binary without waiting for it; stdout and
// stderr go to one buffer.
func (w *world) startUpshift(args ...string) *background {
	w.t.Helper()
	b := &background{cmd: w.command(nil, args...), out: &testenv.SyncBuffer{}, done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	if err := b.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		defer close(b.done)
		err := b.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			b.code = ee.ExitCode()
		case err != nil:
			b.code = -1
		}
	}()
	w.t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			_ = b.cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

func (b *background) exited() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// wait fails the test unless the process exits within d; it returns the
// exit code (-1 when killed by a signal).
func (b *background) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-b.done:
		return b.code
	case <-time.After(d):
		t.Fatalf("upshift %s did not exit within %s:\n%s", strings.Join(b.cmd.Args[1:], " "), d, b.out)
		return 0
	}
}

// waitStageRunning polls `upshift status` until the run is Running and the
// named stage is running its steps.
func (w *world) waitStageRunning(name, stage string, bg *background) *v1alpha1.UpgradeRun {
	w.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	last := "no status yet"
	for {
		r := w.upshift(nil, "status", name, "-o", "json")
		if r.code == 0 {
			var run v1alpha1.UpgradeRun
			if err := json.Unmarshal([]byte(r.stdout), &run); err != nil {
				w.t.Fatalf("decode status: %v\n%s", err, r.stdout)
			}
			last = string(run.Status.Phase)
			for _, st := range run.Status.Stages {
				if st.Name == stage {
					last += ", stage " + stage + " " + string(st.Phase)
					if run.Status.Phase == v1alpha1.RunRunning && st.Phase == v1alpha1.PhaseRunning {
						return &run
					}
				}
			}
		}
		if bg.exited() {
			w.t.Fatalf("upshift %s exited (code %d) before stage %s ran:\n%s", strings.Join(bg.cmd.Args[1:], " "), bg.code, stage, bg.out)
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("run %s never had stage %s running (last: %s):\n%s", name, stage, last, bg.out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
