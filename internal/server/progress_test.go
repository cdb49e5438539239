package server

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestProgressComponentsFollowTheRuns(t *testing.T) {
	now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	planned := []PlannedRun{
		{Run: "p-1.1.0", Version: "1.1.0", Stages: []string{"crds", "control-plane"}},
		{Run: "p-1.2.0", Version: "1.2.0", Stages: []string{"crds"}},
	}
	done := metav1.NewMicroTime(now)
	runs := map[string]*v1alpha1.UpgradeRun{"p-1.1.0": {
		ObjectMeta: metav1.ObjectMeta{Name: "p-1.1.0"},
		Status: v1alpha1.RunStatus{Phase: v1alpha1.RunRollingBack, Stage: "control-plane", Failure: "gate ready: pod crash-looping",
			Stages: []v1alpha1.StageStatus{
				{Name: "crds", Phase: v1alpha1.PhaseRolledBack, FinishedAt: &done},
				{Name: "control-plane", Phase: v1alpha1.PhaseRollingBack, Steps: []v1alpha1.StepStatus{{Name: "manager", Phase: v1alpha1.PhaseFailed, Message: "password=hunter2 https://u:secret@example.com/x"}}},
			}},
	}}
	p := progress(planned, runs, Status{State: StateRunning, LastUpdated: now})
	want := []struct{ name, state, desc string }{
		{"1.1.0: crds", "Failed", "Rolled back, restore verified"},
		{"1.1.0: control-plane", "Running", "Rolling back"},
		{"1.2.0: crds", "Pending", "Pending"},
	}
	if len(p.Components) != len(want) {
		t.Fatalf("components: %+v", p.Components)
	}
	for i, w := range want {
		c := p.Components[i]
		if c.Name != w.name || string(c.Status.State) != w.state || !strings.HasPrefix(c.Status.Description, w.desc) {
			t.Errorf("component %d = %+v, want %v", i, c, w)
		}
	}
	if !strings.Contains(p.Logs, "[control-plane] manager: Failed") || !strings.Contains(p.Logs, "[p-1.1.0] gate ready") {
		t.Errorf("logs: %q", p.Logs)
	}
	if strings.Contains(p.Logs, "secret@") {
		t.Errorf("the logs show a URL's credentials: %q", p.Logs)
	}
	if strings.Join(p.Runs, ",") != "p-1.1.0,p-1.2.0" {
		t.Errorf("runs: %v", p.Runs)
	}
}

func TestTruncateLogsKeepsTheNewest(t *testing.T) {
	long := strings.Repeat("old line\n", maxLogSize/9) + "newest line\n"
	got := truncateLogs(long)
	if len(got) > maxLogSize+len("... (truncated) ") || !strings.HasPrefix(got, "... (truncated) ") || !strings.HasSuffix(got, "newest line\n") {
		t.Errorf("truncated to %d bytes: %.40q…%q", len(got), got, got[len(got)-20:])
	}
	if short := "a\nb\n"; truncateLogs(short) != short {
		t.Error("short logs were changed")
	}
}
