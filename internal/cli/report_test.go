package cli

import (
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/report"
)

// Every action a report can name has this driver's command, except
// reading the warnings, which no command does.
func TestReportCommandForEveryAction(t *testing.T) {
	want := map[report.ActionKind]string{
		report.Approve:        "upshift approve demo --step hold",
		report.Resume:         "upshift apply -f PLAN",
		report.NewAttempt:     "upshift apply --retry -f PLAN",
		report.Retry:          "upshift retry demo",
		report.RollBack:       "upshift rollback demo",
		report.InspectBackup:  "upshift backup show demo",
		report.Watch:          "upshift status demo",
		report.ReviewWarnings: "",
	}
	for kind, w := range want {
		if got := reportCommand(report.Action{Kind: kind, Run: "demo", Step: "hold"}); got != w {
			t.Errorf("%s: %q, want %q", kind, got, w)
		}
	}
}

// Arguments are checked before the cluster is asked anything.
func TestReportRefusesBadArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "requires at least 1 arg"},
		{[]string{"report", "demo", "-o", "html"}, `--output "html": use markdown, json or yaml`},
		{[]string{"report", "hop-1", "hop-2", "hop-1"}, `run "hop-1" is named twice`},
	} {
		_, _, err := run(t, append(c.args, "--kubeconfig", "/nonexistent")...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("upshift %s: %v, want an error saying %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}
