package report

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Markdown renders a run's report in the sections of a runbook's upgrade
// report. command renders each next action as the driver's command (nil:
// the reasons alone).
func Markdown(r Report, command CommandFunc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Upgrade report: run %s\n\n", text(r.Name))
	overview(&b, r)
	runSections(&b, r, 2)
	nextSection(&b, r.Next, command, 2, r.Summary)
	return b.String()
}

// UpgradeMarkdown renders a multi-hop upgrade's report: the whole, the
// hops at a glance, what to do next, then each hop as Markdown renders a
// run, a heading level down.
func UpgradeMarkdown(u Upgrade, command CommandFunc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Upgrade report: %s → %s\n\n", text(u.From), text(u.To))
	item(&b, "From", u.From)
	to := u.To
	if !u.Planned {
		// `upshift report` reads the runs alone, whose records keep
		// their own hop and not the upgrade's target.
		to += " (the last hop's: the runs' records do not keep the version the upgrade was asked for)"
	}
	item(&b, "To", to)
	item(&b, "Reached", u.Reached)
	item(&b, "Outcome", fmt.Sprintf("%s: %s", u.Phase, u.Summary))
	hops := fmt.Sprint(len(u.Hops) + len(u.NotRun))
	if len(u.NotRun) > 0 {
		hops += fmt.Sprintf(" (%d run, %d not run)", len(u.Hops), len(u.NotRun))
	}
	item(&b, "Hops", hops)
	timingItems(&b, u.Timing)
	b.WriteString("\n## Hops\n\n| Hop | Run | From | To | Outcome | Took |\n|---|---|---|---|---|---|\n")
	for i, h := range u.Hops {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, cell(h.Name), cell(h.From), cell(h.To), cell(string(h.Phase)), took(h.Duration))
	}
	for _, h := range u.NotRun {
		fmt.Fprintf(&b, "| %d |  | %s | %s | %s |  |\n", h.Hop, cell(h.From), cell(h.To), NotRunOutcome)
	}
	b.WriteString("\n")
	if len(u.Warnings) > 0 {
		b.WriteString("## Issues encountered\n\n")
		list(&b, u.Warnings)
	}
	nextSection(&b, u.Next, command, 2, u.Summary)
	for i, h := range u.Hops {
		fmt.Fprintf(&b, "## Hop %d: run %s (%s → %s)\n\n", i+1, text(h.Name), text(h.From), text(h.To))
		overview(&b, h)
		runSections(&b, h, 3)
	}
	for _, h := range u.NotRun {
		fmt.Fprintf(&b, "## Hop %d: %s (%s → %s)\n\nNo run: the upgrade stopped before this hop.\n\n", h.Hop, NotRunOutcome, text(h.From), text(h.To))
	}
	return b.String()
}

// overview is the run at a glance, as a list.
func overview(b *strings.Builder, r Report) {
	item(b, "From", r.From)
	item(b, "To", r.To)
	item(b, "Outcome", fmt.Sprintf("%s: %s", r.Phase, r.Summary))
	if r.Message != "" && r.Message != r.Summary {
		item(b, "Message", r.Message)
	}
	item(b, "Attempt", fmt.Sprint(r.Attempt))
	timingItems(b, r.Timing)
	if r.PlanDigest != "" {
		item(b, "Plan digest", r.PlanDigest)
	}
	b.WriteString("\n")
}

// runSections are a run's steps, gates, issues and rollback, with
// headings at level.
func runSections(b *strings.Builder, r Report, level int) {
	fmt.Fprintf(b, "%s Steps executed\n\n", heading(level))
	if len(r.Stages) == 0 {
		b.WriteString("None: the run has not started.\n\n")
	}
	for i, s := range r.Stages {
		fmt.Fprintf(b, "%s Stage %d: %s, %s", heading(level+1), i+1, text(s.Name), s.Phase)
		if s.Duration != nil {
			fmt.Fprintf(b, ", took %s", took(s.Duration))
			if s.Phase == v1alpha1.PhaseRolledBack || s.Phase == v1alpha1.PhaseRollbackErr {
				// The record's end of a stage undone is its restore's.
				b.WriteString(" with its rollback")
			}
		}
		b.WriteString("\n\n")
		if s.Backup != nil {
			fmt.Fprintf(b, "Backup: %d existing object(s), %d the stage may create", s.Backup.Objects, s.Backup.Absent)
			if s.Backup.HelmReleases > 0 {
				fmt.Fprintf(b, ", %d Helm release(s)", s.Backup.HelmReleases)
			}
			b.WriteString(".\n\n")
		}
		if s.Message != "" {
			fmt.Fprintf(b, "Message: %s\n\n", text(s.Message))
		}
		b.WriteString("| Step | Outcome | Started | Took | Message |\n|---|---|---|---|---|\n")
		for _, st := range s.Steps {
			msg := st.Message
			if st.ApprovedBy != "" {
				msg = strings.TrimSpace(msg + " (approved by " + st.ApprovedBy + ")")
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", cell(st.Name), st.Phase, stamp(st.Started), took(st.Duration), cell(msg))
		}
		b.WriteString("\n")
	}

	fmt.Fprintf(b, "%s Validation results\n\n", heading(level))
	gateTable(b, level+1, "Blocking (must pass)", "blocking", r.Gates.Blocking)
	gateTable(b, level+1, "Warning (should pass)", "warning", r.Gates.Warning)
	gateTable(b, level+1, "Info (nice to have)", "info", r.Gates.Info)

	fmt.Fprintf(b, "%s Issues encountered\n\n", heading(level))
	if len(r.Warnings) == 0 {
		b.WriteString("None.\n\n")
	} else {
		list(b, r.Warnings)
	}

	fmt.Fprintf(b, "%s Rollback\n\n", heading(level))
	rollbackSection(b, r.Rollback)
}

func gateTable(b *strings.Builder, level int, title, severity string, gates []Gate) {
	fmt.Fprintf(b, "%s %s\n\n", heading(level), title)
	if len(gates) == 0 {
		fmt.Fprintf(b, "No %s gate.\n\n", severity)
		return
	}
	b.WriteString("| Stage | Gate | Result | Took | Message |\n|---|---|---|---|---|\n")
	for _, g := range gates {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", cell(g.Stage), cell(g.Name), mark(g.Result), took(g.Duration), cell(g.Message))
	}
	b.WriteString("\n")
}

// mark shows a gate's result at a glance, as a runbook's checklist does.
func mark(r GateResult) string {
	switch r {
	case Passed:
		return "✅ passed"
	case Failed:
		return "❌ failed"
	case Checking:
		return "… checking"
	}
	return "not checked"
}

func rollbackSection(b *strings.Builder, rb *Rollback) {
	if rb == nil {
		b.WriteString("Nothing was rolled back.\n\n")
		return
	}
	if rb.Reason != "" {
		item(b, "Reason", rb.Reason)
	}
	switch {
	case rb.Verified:
		item(b, "Restore verified", "yes: every restored object equals its snapshot")
	case rb.Done:
		item(b, "Restore verified", "no: the rollback failed")
	default:
		item(b, "Restore verified", "not yet: the rollback is in progress")
	}
	b.WriteString("\n")
	if len(rb.Stages) == 0 {
		b.WriteString("No stage needed undoing.\n\n")
		return
	}
	b.WriteString("| Stage | Outcome | Verified | Restored | Deleted | Message |\n|---|---|---|---|---|---|\n")
	var diffs []string
	for _, s := range rb.Stages {
		verified := "no"
		if s.Verified {
			verified = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %s |\n", cell(s.Stage), s.Phase, verified, s.Restored, s.Deleted, cell(s.Message))
		for _, d := range s.Differences {
			diffs = append(diffs, fmt.Sprintf("stage %s: %s", s.Stage, d))
		}
	}
	b.WriteString("\n")
	if len(diffs) > 0 {
		b.WriteString("Differences from the snapshots:\n\n")
		list(b, diffs)
	}
	if len(rb.Pending) > 0 {
		fmt.Fprintf(b, "Not undone: %s.\n\n", text(strings.Join(rb.Pending, ", ")))
	}
}

func nextSection(b *strings.Builder, actions []Action, command CommandFunc, level int, summary string) {
	fmt.Fprintf(b, "%s What to do next\n\n", heading(level))
	if len(actions) == 0 {
		fmt.Fprintf(b, "Nothing: %s.\n\n", text(summary))
		return
	}
	for _, a := range actions {
		line := text(a.Why)
		if command != nil {
			if c := command(a); c != "" {
				line += ": `" + strings.ReplaceAll(c, "`", "'") + "`"
			}
		}
		fmt.Fprintf(b, "- %s\n", line)
	}
	b.WriteString("\n")
}

func timingItems(b *strings.Builder, t Timing) {
	if t.Started != nil {
		item(b, "Started", stamp(t.Started))
	}
	if t.Finished != nil {
		item(b, "Finished", stamp(t.Finished))
	}
	if t.Duration != nil {
		item(b, "Took", took(t.Duration))
	}
}

func item(b *strings.Builder, name, value string) {
	fmt.Fprintf(b, "- **%s:** %s\n", name, text(value))
}

func list(b *strings.Builder, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(b, "- %s\n", text(l))
	}
	b.WriteString("\n")
}

func heading(level int) string { return strings.Repeat("#", level) }

// stamp is a time in UTC to the second ("" when unknown); the JSON form
// keeps the record's microseconds.
func stamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// took is a duration rounded for reading: milliseconds under a second,
// tenths under a minute, seconds past it.
func took(d *metav1.Duration) string {
	if d == nil {
		return ""
	}
	switch v := d.Duration; {
	case v < time.Second:
		return v.Round(time.Millisecond).String()
	case v < time.Minute:
		return v.Round(100 * time.Millisecond).String()
	default:
		return v.Round(time.Second).String()
	}
}

// text is free text (a message, a name) made safe for Markdown: an HTML
// tag would vanish ("<redacted>"), a backquote would open code, and a
// line break would end a list item or a table row.
var textEscaper = strings.NewReplacer("<", `\<`, "`", "\\`", "\r\n", "<br>", "\n", "<br>")

func text(s string) string { return textEscaper.Replace(s) }

// cell is text inside a table row, where "|" would end the cell.
func cell(s string) string { return strings.ReplaceAll(text(s), "|", `\|`) }
