package report

import (
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Two hops, the second rolled back: the upgrade goes from the first hop's
// version to the last's, reached the first hop's target, stands at hop 2
// with hop 2's way on, and spans both hops' times.
func TestBuildUpgradeStoppedAtAHop(t *testing.T) {
	hop1 := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, nil)
	hop2 := drive(t, platformPlan("platform-1.2.0", "1.2.0"), "1.1.0", epoch.Add(time.Hour), script{healthGate: healthFailure})
	u := BuildUpgrade(hop1, hop2)
	if u.From != "1.0.0" || u.To != "1.2.0" || u.Reached != "1.1.0" || u.Phase != v1alpha1.RunRolledBack || u.At != 2 {
		t.Errorf("from %s to %s reached %s phase %s at %d", u.From, u.To, u.Reached, u.Phase, u.At)
	}
	mustContain(t, "summary", u.Summary, "hop 2 of 2", "platform-1.2.0", "rolled back", "the cluster is at version 1.1.0")
	if len(u.Hops) != 2 || u.Hops[0].Name != "platform-1.1.0" || u.Hops[1].Phase != v1alpha1.RunRolledBack {
		t.Fatalf("hops: %+v", u.Hops)
	}
	if kinds(u.Next) != string(NewAttempt) || u.Next[0].Run != "platform-1.2.0" {
		t.Errorf("next: %+v, want hop 2's", u.Next)
	}
	if want := hop2.Status.FinishedAt.Sub(hop1.Status.StartedAt.Time); u.Duration == nil || u.Duration.Duration != want || !u.Started.Equal(hop1.Status.StartedAt.Time) {
		t.Errorf("started %v took %v, want from hop 1's start to hop 2's end (%s)", u.Started, u.Duration, want)
	}
	if len(u.Warnings) != 0 {
		t.Errorf("warnings: %q", u.Warnings)
	}
	golden(t, "upgrade-stopped.md", UpgradeMarkdown(u, command))
}

// Every hop succeeded: the upgrade reached its target; the warnings of any
// hop are what to look into next.
func TestBuildUpgradeReachedTheTarget(t *testing.T) {
	hop1 := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, script{metricsGate: "scrape failed: 500"})
	hop2 := drive(t, platformPlan("platform-1.2.0", "1.2.0"), "1.1.0", epoch.Add(time.Hour), nil)
	u := BuildUpgrade(hop1, hop2)
	if u.Phase != v1alpha1.RunSucceeded || u.At != 0 || u.Reached != "1.2.0" || u.Summary != "reached version 1.2.0 in 2 hop(s)" {
		t.Errorf("phase %s at %d reached %s summary %q", u.Phase, u.At, u.Reached, u.Summary)
	}
	if kinds(u.Next) != string(ReviewWarnings) {
		t.Errorf("next: %+v", u.Next)
	}
	if u := BuildUpgrade(hop2); u.Next != nil || u.From != "1.1.0" {
		t.Errorf("one clean hop: from %s next %+v", u.From, u.Next)
	}
}

// A hop that failed without rollback leaves the cluster between its
// versions; a hop that did not start where the one before it ends is
// named among the warnings.
func TestBuildUpgradeBetweenVersionsAndOutOfOrder(t *testing.T) {
	p := platformPlan("platform-1.2.0", "1.2.0")
	no := false
	p.Spec.AutoRollback = &no
	hop1 := drive(t, platformPlan("platform-1.1.0", "1.1.0"), "1.0.0", epoch, nil)
	hop2 := drive(t, p, "1.0.5", epoch.Add(time.Hour), script{proxyStep: "CrashLoopBackOff"})
	u := BuildUpgrade(hop1, hop2)
	mustContain(t, "summary", u.Summary, "the cluster is between versions 1.0.5 and 1.2.0")
	if len(u.Warnings) != 1 {
		t.Fatalf("warnings: %q", u.Warnings)
	}
	mustContain(t, "warning", u.Warnings[0], "hop 2 (run platform-1.2.0) started from version 1.0.5, not from 1.1.0")
	if kinds(u.Next) != "retry,rollback" {
		t.Errorf("next: %+v", u.Next)
	}
}

// No run, no hop: nothing known, and nothing breaks.
func TestBuildUpgradeOfNothing(t *testing.T) {
	u := BuildUpgrade()
	if u.From != UnknownVersion || u.To != UnknownVersion || u.Hops == nil || len(u.Hops) != 0 {
		t.Errorf("%+v", u)
	}
}
