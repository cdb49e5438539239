package runner

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/faults"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// fixture is a session on the package's cluster whose requests pass
// through a fault injector, with namespaces of the test's own for the
// platform (ns) and for runs, backups and the lease.
type fixture struct {
	t      *testing.T
	s      *Session
	faults *faults.Injector
	cs     kubernetes.Interface
	ns     string
	runsNS string
	ctx    context.Context
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	id := rand.String(5)
	f := &fixture{t: t, faults: &faults.Injector{}, cs: cs, ns: "app-" + id, runsNS: "runs-" + id, ctx: ctx}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.s, err = Open(f.faults.Wrap(c.RESTConfig()), Options{Namespace: f.runsNS, LeaseDuration: 4 * time.Second, LeaseRenew: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// plan writes a plan whose one stage applies a ConfigMap with level, and
// resolves it.
func (f *fixture) plan(name, level string, extraStages string) *resolve.Plan {
	f.t.Helper()
	dir := f.t.TempDir()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + f.ns + "}\ndata: {level: \"" + level + "\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(cm), 0o644); err != nil {
		f.t.Fatal(err)
	}
	body := "apiVersion: upshift.dev/v1alpha1\nkind: UpgradePlan\nmetadata: {name: " + name + "}\nspec:\n  version: \"" + level + "\"\n  stages:\n" +
		"  - name: config\n    steps:\n    - name: settings\n      timeout: 20s\n      manifests: {path: cm.yaml}\n" + extraStages
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
	l, err := plan.Load(filepath.Join(dir, "plan.yaml"))
	if err != nil {
		f.t.Fatal(err)
	}
	p, err := resolve.Read(f.ctx, l, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) level() string {
	f.t.Helper()
	cm, err := f.cs.CoreV1().ConfigMaps(f.ns).Get(f.ctx, "settings", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return cm.Data["level"]
}

// A rollback refuses, and changes nothing, when it cannot list the runs to
// check that no later run stands on the one it would undo.
func TestRollbackRefusesWhenRunsCannotBeListed(t *testing.T) {
	f := newFixture(t)
	out, err := f.s.Apply(f.ctx, f.plan("listed", "2", ""), false)
	if err != nil || out.Run.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("apply: %v, %+v", err, out)
	}
	f.faults.Set(faults.Rule{Method: http.MethodGet, PathSuffix: "/namespaces/" + f.runsNS + "/secrets", Status: 500, Message: "etcd is sad"})
	_, err = f.s.Rollback(f.ctx, "listed")
	f.faults.Set()
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "etcd is sad") {
		t.Fatalf("rollback with a failing run list = %v; want a refusal quoting the cause", err)
	}
	if f.faults.Hits() == 0 {
		t.Fatal("the run list was never asked for")
	}
	if got := f.level(); got != "2" {
		t.Fatalf("the refused rollback changed the ConfigMap: level %q, want 2", got)
	}
}

// Ctrl-C while the run record cannot be written: the run is not reported
// as saved; the stop carries the save's error.
func TestInterruptWhoseSaveFailsIsNotReportedSaved(t *testing.T) {
	f := newFixture(t)
	p := f.plan("interrupted", "2", "  - name: hold\n    steps:\n    - name: hold\n      pause: {duration: 1m}\n")
	ctx, interrupt := context.WithCancel(f.ctx)
	type result struct {
		out *Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := f.s.Apply(ctx, p, false)
		done <- result{out, err}
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := f.s.Store().Get(f.ctx, "interrupted")
		if err == nil && len(r.Status.Stages) == 2 && r.Status.Stages[1].Steps[0].Phase == v1alpha1.PhaseRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pause never started: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.faults.Set(faults.Rule{Method: http.MethodPatch, PathContains: "/namespaces/" + f.runsNS + "/upgraderuns/", Status: 500, Message: "etcd is sad"})
	interrupt()
	res := <-done
	f.faults.Set()
	if res.err != nil {
		t.Fatalf("apply: %v", res.err)
	}
	var notSaved *NotSavedError
	if !errors.As(res.out.Stopped, &notSaved) || errors.Is(res.out.Stopped, ErrInterrupted) || !strings.Contains(res.out.Stopped.Error(), "etcd is sad") {
		t.Fatalf("Stopped = %v; want a NotSavedError quoting the cause, not a resumable interruption", res.out.Stopped)
	}
	// The run resumes from its last saved transition all the same.
	out, err := f.s.Apply(f.ctx, p, false)
	if err != nil {
		t.Fatal(err)
	}
	if st := out.Run.Status.Stages[1].Steps[0]; st.Phase != v1alpha1.PhaseRunning && st.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("resumed pause is %s", st.Phase)
	}
}

// An API server that cannot be reached stops the run as saved, nothing
// rolled back; once it answers, apply resumes and finishes. A server that
// answers 500 fails the step and rolls it back.
func TestUnreachableStopsButA500FailsTheStep(t *testing.T) {
	f := newFixture(t)
	if out, err := f.s.Apply(f.ctx, f.plan("v1", "1", ""), false); err != nil || out.Run.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("install: %v", err)
	}
	cmPath := "/namespaces/" + f.ns + "/configmaps/settings"

	f.faults.Set(faults.Rule{Method: http.MethodPatch, PathSuffix: cmPath, Refuse: true})
	out, err := f.s.Apply(f.ctx, f.plan("v2", "2", ""), false)
	f.faults.Set()
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(out.Stopped, ErrAPIUnavailable) || out.Run.Status.Phase != v1alpha1.RunRunning {
		t.Fatalf("unreachable: Stopped = %v, phase %s; want ErrAPIUnavailable and a Running run", out.Stopped, out.Run.Status.Phase)
	}
	if out, err = f.s.Apply(f.ctx, f.plan("v2", "2", ""), false); err != nil || out.Run.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("resume after the outage: %v, %+v", err, out.Stopped)
	}

	f.faults.Set(faults.Rule{Method: http.MethodPatch, PathSuffix: cmPath, Status: 500, Message: "storage for configmaps is broken"})
	out, err = f.s.Apply(f.ctx, f.plan("v3", "3", ""), false)
	f.faults.Set()
	if err != nil {
		t.Fatal(err)
	}
	if out.Stopped != nil || out.Run.Status.Phase != v1alpha1.RunRolledBack || !strings.Contains(out.Run.Status.Failure, "storage for configmaps is broken") {
		t.Fatalf("500: Stopped = %v, phase %s, failure %q; want RolledBack with the cause", out.Stopped, out.Run.Status.Phase, out.Run.Status.Failure)
	}
	if got := f.level(); got != "2" {
		t.Fatalf("level %q after the rollback, want 2", got)
	}
}
