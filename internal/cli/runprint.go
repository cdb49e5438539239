package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// printRunSummary prints a run: its phase, then each stage with its steps
// and gates, times and messages (through redact.Run).
func printRunSummary(w io.Writer, r *v1alpha1.UpgradeRun) {
	r = redact.Run(r)
	st := r.Status
	fmt.Fprintf(w, "run %s: version %s, attempt %d, %s", r.Name, r.Spec.Plan.Version, st.Attempt, st.Phase)
	if d := took(st.StartedAt, st.FinishedAt); d != "" {
		fmt.Fprintf(w, " in %s", d)
	}
	fmt.Fprintln(w)
	if st.Message != "" {
		fmt.Fprintf(w, "  %s\n", st.Message)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE/STEP\tPHASE\tTOOK\tMESSAGE")
	for si, ss := range st.Stages {
		msg := ss.Message
		if ss.Backup != nil && msg == "" {
			msg = fmt.Sprintf("backup: %d existing object(s), %d to be created, %d Secret(s)", ss.Backup.Objects, ss.Backup.Absent, len(ss.Backup.Secrets))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ss.Name, ss.Phase, took(ss.StartedAt, ss.FinishedAt), oneLine(msg))
		for i, s := range ss.Steps {
			fmt.Fprintf(tw, "  step %s\t%s\t%s\t%s\n", s.Name, s.Phase, took(s.StartedAt, s.FinishedAt), oneLine(stepMessage(r, si, i)))
		}
		for _, g := range ss.Gates {
			fmt.Fprintf(tw, "  gate %s\t%s\t%s\t%s\n", g.Name, g.Phase, took(g.StartedAt, g.FinishedAt), oneLine(g.Message))
		}
		if rb := ss.Rollback; rb != nil {
			for _, k := range rb.Kept {
				fmt.Fprintf(tw, "  kept\t\t\t%s\n", k)
			}
			for _, d := range rb.Differences {
				fmt.Fprintf(tw, "  difference\t\t\t%s\n", d)
			}
			for _, d := range rb.NotCompared {
				fmt.Fprintf(tw, "  not compared\t\t\t%s\n", d)
			}
		}
	}
	tw.Flush()
}

// printRunList prints one line per run (history), through redact.Run.
func printRunList(w io.Writer, runs []v1alpha1.UpgradeRun) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tPHASE\tATTEMPT\tSTARTED\tTOOK\tMESSAGE")
	for _, r := range redact.Runs(runs) {
		started := ""
		if r.Status.StartedAt != nil {
			started = r.Status.StartedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.Name, r.Spec.Plan.Version, r.Status.Phase, r.Status.Attempt, started, took(r.Status.StartedAt, r.Status.FinishedAt), oneLine(r.Status.Message))
	}
	tw.Flush()
}

func took(start, end *metav1.MicroTime) string {
	if start == nil || end == nil {
		return ""
	}
	return end.Sub(start.Time).Round(100 * time.Millisecond).String()
}

// oneLine keeps tables readable: the first line, at most 160 characters.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 160 {
		s = s[:157] + "…"
	}
	return s
}
