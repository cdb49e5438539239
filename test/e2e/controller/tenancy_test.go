package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// tenant is the same test's share of the cluster in another namespace:
// the same runs namespace and controller, its own plans and platform.
func (e *env) tenant(prefix string) *env {
	e.t.Helper()
	t := *e
	t.ns = testenv.Namespace(e.t, e.ctx, e.cs, prefix)
	return &t
}

// run reads a run from the runs namespace, nil when there is none.
func (e *env) run(name string) *v1alpha1.UpgradeRun {
	e.t.Helper()
	s, err := runstore.New(e.cfg, e.runs)
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := s.Get(e.ctx, name)
	if err != nil {
		return nil
	}
	return r
}

func approvals(r *v1alpha1.UpgradeRun) []v1alpha1.Approval {
	if r == nil {
		return nil
	}
	return r.Status.Approvals
}

// Two tenants' plans of one name: B's approve annotation never reaches
// A's waiting run (A's gate is not bypassed, A's image does not move);
// each plan's status shows its own run only; B's run starts on its own
// once the cluster is free; an approval made through a plan names the
// plan it came from; the CLI asks for -n when the short name is shared.
func TestTenantsShareNoRun(t *testing.T) {
	t.Parallel()
	a := newEnv(t)
	b := a.tenant("ctl-b")
	for _, e := range []*env{a, b} {
		e.installWeb()
		e.grant("upgrader")
	}
	a.startController("ctl-tenants", nil, "--watch-namespaces", b.ns)
	a.createPlan(a.webPlan("web-2", "2.0", "2.0", "upgrader", true))
	runA, runB := a.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", time.Minute).Status.Run, b.ns+".web-2"

	pb := b.webPlan("web-2", "2.0", "2.0", "upgrader", true)
	pb.Annotations = map[string]string{v1alpha1.AnnotationApprove: "go-ahead"}
	b.createPlan(pb)
	waitFor(t, "B's approve annotation handled", func() bool {
		return b.getPlan("web-2").Status.HandledActions[v1alpha1.AnnotationApprove] == "go-ahead"
	})
	if r := a.run(runA); r == nil || len(r.Status.Approvals) != 0 {
		t.Fatalf("B's annotation approved A's run %s (nil: no such run): %+v", runA, approvals(r))
	}
	if got := a.webImage(); got != "example.com/web:"+startVersion {
		t.Fatalf("A's web moved to %s on B's annotation", got)
	}
	if p := b.getPlan("web-2"); p.Status.Run == runA || p.Status.Phase == v1alpha1.RunRunning {
		t.Errorf("B's plan shows A's run: %+v", p.Status)
	}
	if !contains(b.events("web-2"), "Warning ActionRefused: upshift.dev/approve=go-ahead: the plan has no run yet") {
		t.Errorf("B's annotation was not refused for want of a run: %v", b.events("web-2"))
	}

	t.Log("the CLI: a short name shared by two namespaces' runs needs -n")
	a.annotate("web-2", v1alpha1.AnnotationApprove, "go-ahead")
	a.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)
	if r := a.run(runA); r == nil || len(r.Status.Approvals) != 1 || !strings.Contains(r.Status.Approvals[0].By, "UpgradePlan "+a.ns+"/web-2") {
		t.Errorf("A's approval does not name the plan it came from: %+v", approvals(r))
	}
	b.waitCondition("web-2", v1alpha1.ConditionWaitingForApproval, metav1.ConditionTrue, "", 2*time.Minute)
	if p := b.getPlan("web-2"); p.Status.Run != runB {
		t.Errorf("B's plan shows run %q, want its own %s", p.Status.Run, runB)
	}
	if out, err := a.upshift("status", "web-2"); err == nil || !strings.Contains(out, "-n NAMESPACE") {
		t.Errorf("upshift status web-2 with two tenants' runs: %v\n%s", err, out)
	}
	if out, err := a.upshift("approve", "web-2", "-n", b.ns); err != nil {
		t.Fatalf("upshift approve web-2 -n %s: %v\n%s", b.ns, err, out)
	}
	b.waitCondition("web-2", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 2*time.Minute)
	if got := b.webImage(); got != "example.com/web:2.0" {
		t.Errorf("B's web is %s, want example.com/web:2.0", got)
	}
}

// configPlan writes one ConfigMap of its own: a plan that finishes in a
// moment.
func (e *env) configPlan(name string) *v1alpha1.UpgradePlan {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: " + e.ns + "\ndata:\n  plan: " + name + "\n"
	return &v1alpha1.UpgradePlan{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.UpgradePlanSpec{Version: "1.0.0", ServiceAccountName: "upgrader", Stages: []v1alpha1.Stage{{
			Name: "config", Steps: []v1alpha1.Step{{Name: name, Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: cm}}}},
		}}},
	}
}

// runsCreated counts the runs user created, by the audit log.
func (e *env) runsCreated(user string) int {
	n := 0
	for _, w := range e.writesBy(user, e.runs) {
		if strings.HasPrefix(w, "create upgraderuns ") {
			n++
		}
	}
	return n
}

// More finished plans than --keep-runs, as a GitOps repository keeps
// them: pruning their runs applies none of them again, before or after
// a restart of the controller, and each plan keeps its outcome.
func TestFinishedPlansAreAppliedOncePerGeneration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("upgrader")
	const plans, user = 12, "ctl-prune"
	ctl := e.startController(user, nil, "--keep-runs", "1")
	names := make([]string, plans)
	uids := map[string]string{} // each plan's run, as its status records it
	for i := range names {
		names[i] = "config-" + string(rune('a'+i))
		e.createPlan(e.configPlan(names[i]))
		p := e.waitCondition(names[i], v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, time.Minute)
		// The newest run is kept (--keep-runs 1) until the next ends.
		if run := e.run(e.ns + "." + names[i]); run == nil || p.Status.RunUID != string(run.UID) {
			t.Fatalf("plan %s: status.runUID %q is not its run's UID (%v)", names[i], p.Status.RunUID, run)
		}
		uids[names[i]] = p.Status.RunUID
	}
	quiet := func(what string) {
		time.Sleep(30 * time.Second) // twice: a minute of quiet
		if n := e.runsCreated(user); n != plans {
			t.Errorf("%s: %d runs created for %d plans applied once each: pruned plans ran again", what, n, plans)
		}
	}
	quiet("after the prunes")
	ctl.Kill()
	e.startController(user, nil, "--keep-runs", "1")
	quiet("after a restart")
	for _, n := range names {
		if p := e.getPlan(n); p.Status.Phase != v1alpha1.RunSucceeded || p.Status.Run != e.ns+"."+n || p.Status.RunUID != uids[n] {
			t.Errorf("plan %s lost its outcome: %+v", n, p.Status)
		}
	}
}

// No plan acts with the controller's standing: a ServiceAccount name
// that is none is refused by the API server, a plan in the controller's
// own namespace or naming its own ServiceAccount is refused (Invalid,
// naming the field) and never runs.
func TestPlansMayNotBorrowTheControllersStanding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	home := e.tenant("ctl-home") // where the controller's ServiceAccount lives
	own := &env{}
	*own = *e
	own.ns = e.runs
	user := "system:serviceaccount:" + home.ns + ":upshift"
	e.startController(user, nil, "--watch-namespaces", home.ns, "--watch-namespaces", e.runs)

	bad := e.configPlan("colon")
	bad.Spec.ServiceAccountName = "B:strong"
	bad.APIVersion, bad.Kind, bad.Namespace = v1alpha1.APIVersion, v1alpha1.PlanKind, e.ns
	if out, err := e.kubectlStdin(toYAML(bad), "create", "-f", "-"); err == nil || !strings.Contains(out, "spec.serviceAccountName") {
		t.Errorf("a plan naming ServiceAccount B:strong was not refused on spec.serviceAccountName: %v\n%s", err, out)
	}

	own.createPlan(own.configPlan("in-runs"))
	p := own.waitCondition("in-runs", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalid, time.Minute)
	if c := findCondition(p, v1alpha1.ConditionReady); !strings.Contains(c.Message, "metadata.namespace: "+e.runs+" is the controller's own namespace") {
		t.Errorf("a plan in the controller's namespace: %q", c.Message)
	}

	borrow := home.configPlan("borrow")
	borrow.Spec.ServiceAccountName = "upshift"
	home.createPlan(borrow)
	p = home.waitCondition("borrow", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalid, time.Minute)
	if c := findCondition(p, v1alpha1.ConditionReady); !strings.Contains(c.Message, "spec.serviceAccountName: "+user+" is the controller's own ServiceAccount") {
		t.Errorf("a plan naming the controller's ServiceAccount: %q", c.Message)
	}
	if n := e.runsCreated(user); n != 0 {
		t.Errorf("%d runs created for refused plans", n)
	}
}
