package engine

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestRunNameKeysTheNamespace(t *testing.T) {
	if got := RunName("", "web-2"); got != "web-2" {
		t.Errorf("a plan file's run: %q, want web-2", got)
	}
	a, b := RunName("team-a", "web-2"), RunName("team-b", "web-2")
	if a != "team-a.web-2" || a == b {
		t.Errorf("runs of two namespaces' web-2: %q and %q", a, b)
	}
	long := strings.Repeat("n", 63)
	x, y := RunName(long, strings.Repeat("p", 253)), RunName(long, strings.Repeat("p", 252)+"q")
	if len(x) > 253 || x == y {
		t.Errorf("long keys: %d characters, distinct %v", len(x), x != y)
	}
}

func TestOwnedBy(t *testing.T) {
	plan := func(ns, name string) *v1alpha1.RunOwner {
		return &v1alpha1.RunOwner{Kind: v1alpha1.PlanKind, Namespace: ns, Name: name, UID: "u1"}
	}
	run := func(o *v1alpha1.RunOwner) *v1alpha1.UpgradeRun {
		return &v1alpha1.UpgradeRun{Spec: v1alpha1.UpgradeRunSpec{Owner: o}}
	}
	recreated := plan("a", "web")
	recreated.UID = "u2"
	for _, tc := range []struct {
		name  string
		run   *v1alpha1.UpgradeRun
		owner *v1alpha1.RunOwner
		want  bool
	}{
		{"its own", run(plan("a", "web")), plan("a", "web"), true},
		{"re-created under its name", run(plan("a", "web")), recreated, true},
		{"another namespace's", run(plan("b", "web")), plan("a", "web"), false},
		{"a PlatformUpgrade's", run(&v1alpha1.RunOwner{Kind: v1alpha1.PlatformUpgradeKind, Namespace: "a", Name: "web"}), plan("a", "web"), false},
		{"the CLI's, for a plan", run(nil), plan("a", "web"), false},
		{"a plan's, for the CLI", run(plan("a", "web")), nil, false},
		{"the CLI's, for the CLI", run(nil), nil, true},
	} {
		if got := OwnedBy(tc.run, tc.owner); got != tc.want {
			t.Errorf("%s: OwnedBy %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFindRun(t *testing.T) {
	run := func(ns, name string) v1alpha1.UpgradeRun {
		return v1alpha1.UpgradeRun{ObjectMeta: metav1.ObjectMeta{Name: RunName(ns, name)}, Spec: v1alpha1.UpgradeRunSpec{PlanNamespace: ns}}
	}
	runs := []v1alpha1.UpgradeRun{run("", "cli"), run("a", "web"), run("b", "web"), run("a", "api"), run("", "a.db")}
	for _, tc := range []struct {
		ns, name, want, err string
	}{
		{"", "cli", "cli", ""},
		{"", "api", "a.api", ""},
		{"", "a.web", "a.web", ""},
		{"b", "web", "b.web", ""},
		{"c", "web", "c.web", ""}, // not read: Get says it is absent
		{"", "a.db", "a.db", ""},
		{"", "none", "", ""},
		{"", "web", "", "plans named \"web\" in namespaces a, b each have a run: name the plan's namespace with -n NAMESPACE"},
	} {
		got, err := FindRun(runs, tc.ns, tc.name)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("FindRun(%q, %q) = %q, %v; want %q, %q", tc.ns, tc.name, got, err, tc.want, tc.err)
		}
	}
}

func TestPlanMetaGivesTheRunBack(t *testing.T) {
	for _, key := range [][2]string{{"", "web"}, {"", "a.b"}, {"team-a", "web-2"}, {strings.Repeat("n", 63), strings.Repeat("p", 253)}} {
		p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Namespace: key[0], Name: key[1]}}
		r := NewRun(p, "sha256:x", nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		back := &v1alpha1.UpgradePlan{ObjectMeta: PlanMeta(r)}
		if RunOf(back) != r.Name {
			t.Errorf("%v: run %q, rebuilt plan %s/%s names run %q", key, r.Name, back.Namespace, back.Name, RunOf(back))
		}
	}
}
