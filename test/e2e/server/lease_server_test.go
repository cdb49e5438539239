package server_test

import (
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/internal/lease"
)

// TestAPIAndCLINeverDriveAtOnce is TestCLIAndAPINeverDriveAtOnce the
// other way round: while a hop the server started waits at its approval
// (the server holds the cluster's lease), `upshift apply` of another plan
// and `upshift upgrade --to` of the same hop are refused, exit 1, naming
// the server's process and run as the lease's holder, and write nothing:
// no run, no backup, the lease still the server's. The server's hop then
// goes on when approved.
func TestAPIAndCLINeverDriveAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	admin := s.login(adminPassword)
	hop := ns + "-1.1.0"
	if p := s.startWaiting(admin); p.Waiting.Run != hop {
		t.Fatalf("the server waits in run %s, want %s", p.Waiting.Run, hop)
	}
	holder := fmt.Sprintf("pid %d (run %s)", s.cmd.Process.Pid, hop)
	if id := e.leaseHolder(); !strings.Contains(id, holder) {
		t.Fatalf("the lease is held by %q while the server's hop waits, want %q", id, holder)
	}
	before := e.runsNamespaceObjects()

	planFile := filepath.Join(t.TempDir(), "plan.yaml")
	write(t, planFile, strings.ReplaceAll(cliPlan, "NS", ns))
	for _, args := range [][]string{
		{"apply", "-f", planFile},
		{"upgrade", "--to", "1.1.0", "--catalog", catalog, "--set", "approve=true"},
	} {
		out, err := runBinary(e, append(args, "--no-wait", "--runs-namespace", e.runsNS)...)
		t.Logf("upshift %s said:\n%s", args[0], out)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("upshift %s while the server drives: %v, want exit 1 (refused):\n%s", args[0], err, out)
		}
		// apply meets the lease; upgrade, which would resume the hop's
		// run, meets that run's owner first (only the upgrade that
		// started a hop resumes it).
		why := []string{"held by another process", holder}
		if args[0] == "upgrade" {
			why = []string{"run " + hop + " is unfinished", "started by UpgradeWizard"}
		}
		for _, w := range why {
			if !strings.Contains(out, w) {
				t.Errorf("upshift %s's refusal does not say %q:\n%s", args[0], w, out)
			}
		}
	}

	if after := e.runsNamespaceObjects(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the refused commands wrote in %s:\nbefore %v\nafter  %v", e.runsNS, before, after)
	}
	if id := e.leaseHolder(); !strings.Contains(id, holder) {
		t.Errorf("the lease is held by %q after the refusals, want the server still (%s)", id, holder)
	}
	if v := e.version(ns); v != "1.0.0" {
		t.Errorf("the platform runs %s while the server's hop waits, want 1.0.0", v)
	}
	s.must(http.StatusOK, "POST", "/api/runs/"+hop+"/approve", admin, map[string]string{}, nil)
	s.waitFor("/api/linux/upgrade/infra/status", admin, "the hop succeeded", func(p progress) bool { return p.Status.State == "Succeeded" })
	if v := e.version(ns); v != "1.1.0" {
		t.Errorf("the platform runs %s after the approval, want 1.1.0", v)
	}
}

// leaseHolder is who holds the cluster's lease ("" when no one does).
func (e *env) leaseHolder() string {
	e.t.Helper()
	id, valid, err := lease.Holder(e.ctx, e.cs, e.runsNS, lease.DefaultName)
	if err != nil {
		e.t.Fatal(err)
	}
	if !valid {
		return ""
	}
	return id.String()
}

// runsNamespaceObjects are the runs, ConfigMaps and Secrets (backups,
// kept sources, the wizard's state) in the runs namespace, each as
// kind/name@resourceVersion: a write to any shows as a change.
func (e *env) runsNamespaceObjects() []string {
	e.t.Helper()
	dyn, err := dynamic.NewForConfig(testenvCluster(e.t).RESTConfig())
	if err != nil {
		e.t.Fatal(err)
	}
	var objs []string
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "upshift.dev", Version: "v1alpha1", Resource: "upgraderuns"},
		{Version: "v1", Resource: "configmaps"},
		{Version: "v1", Resource: "secrets"},
	} {
		list, err := dyn.Resource(gvr).Namespace(e.runsNS).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, o := range list.Items {
			objs = append(objs, gvr.Resource+"/"+o.GetName()+"@"+o.GetResourceVersion())
		}
	}
	return objs
}
