package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/apps"
)

// printAppList prints one line per rollout, kubectl's columns and the
// step the canary is at.
func printAppList(w io.Writer, list []v1alpha1.AppRollout, namespaces bool, now time.Time) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No AppRollouts found.")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if namespaces {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tVERSION\tTARGET\tPHASE\tSTEP\tAGE\tMESSAGE")
	for i := range list {
		a := &list[i]
		if namespaces {
			fmt.Fprintf(tw, "%s\t", a.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, dash(a.Status.CurrentVersion), dash(a.Status.TargetVersion),
			apps.Display(a), dash(apps.StepOf(a)), duration.HumanDuration(now.Sub(a.CreationTimestamp.Time)), oneLine(a.Status.Message))
	}
	tw.Flush()
}

// printApp prints one rollout: where it stands, its canary steps as a
// strip with the current one marked, its Jobs and rollback, and its
// conditions.
func printApp(w io.Writer, a *v1alpha1.AppRollout, now time.Time) {
	st := a.Status
	fmt.Fprintf(w, "approllout %s/%s: %s\n", a.Namespace, a.Name, apps.Display(a))
	fmt.Fprintf(w, "  version   %s → %s (%s, attempt %d)\n", dash(st.CurrentVersion), dash(orSpec(st.TargetVersion, a.Spec.Version)), a.Spec.UpgradeStrategy.Type, st.Attempt)
	if st.StableImage != "" {
		fmt.Fprintf(w, "  stable    %s, %d replicas\n", st.StableImage, st.Replicas)
	}
	if strip := stepStrip(a, now); strip != "" {
		fmt.Fprintf(w, "  steps     %s\n", strip)
	}
	if bg := a.Spec.UpgradeStrategy.BlueGreen; bg != nil && st.BlueGreen != nil {
		fmt.Fprintf(w, "  services  active %s, preview %s: %s\n", bg.ActiveService, dash(bg.PreviewService), blueGreenState(st.BlueGreen, now))
	}
	if st.MigrationJob != "" {
		fmt.Fprintf(w, "  migration job/%s\n", st.MigrationJob)
	}
	if an := st.Analysis; an != nil {
		fmt.Fprintf(w, "  analysis  %s since %s\n", an.Phase, an.StartedAt.UTC().Format(time.RFC3339))
		for _, m := range an.Metrics {
			fmt.Fprintf(w, "            %s: %s, %d measured, %d failed, %d inconclusive, %d errors; %s\n",
				m.Name, m.Phase, m.Count, m.Failed, m.Inconclusive, m.Error, recent(m.Measurements))
		}
	}
	if rb := st.Rollback; rb != nil {
		fmt.Fprintf(w, "  rollback  %s (restored: %t)\n", rb.Reason, rb.Restored)
		if rb.DownMigrationJob != "" {
			fmt.Fprintf(w, "            down-migration job/%s\n", rb.DownMigrationJob)
		}
		for _, d := range rb.Differences {
			fmt.Fprintf(w, "            difference: %s\n", d)
		}
	}
	if st.Message != "" {
		fmt.Fprintf(w, "  message   %s\n", oneLine(st.Message))
	}
	for _, c := range st.Conditions {
		fmt.Fprintf(w, "  condition %s=%s (%s), %s ago\n", c.Type, c.Status, c.Reason, duration.HumanDuration(now.Sub(c.LastTransitionTime.Time)))
	}
}

// stepStrip draws the canary steps: "10% ✓ → [50% holding 4m left] → 100%".
func stepStrip(a *v1alpha1.AppRollout, now time.Time) string {
	steps := apps.Steps(a, now)
	parts := make([]string, len(steps))
	for i, s := range steps {
		p := fmt.Sprintf("%d%%", s.Weight)
		switch {
		case s.UntilPromoted:
			p += " until promoted"
		case s.Pause > 0:
			p += fmt.Sprintf(" %ds", s.Pause)
		}
		switch s.State {
		case apps.StepCurrent:
			p = "[" + p + ": " + s.Detail + "]"
		case apps.StepDone:
			p += " ✓"
		}
		parts[i] = p
	}
	return strings.Join(parts, " → ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orSpec(status, spec string) string {
	if status == "" {
		return spec
	}
	return status
}

// recent shows the last measurements, newest last, each with its verdict
// when it was not successful: "last: 0.01 0.02 0.5(Failed)".
func recent(ms []v1alpha1.Measurement) string {
	if len(ms) > 5 {
		ms = ms[len(ms)-5:]
	}
	if len(ms) == 0 {
		return "no measurement yet"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.Value
		if m.Phase != v1alpha1.AnalysisSuccessful {
			parts[i] += "(" + string(m.Phase) + ")"
		}
	}
	return "last: " + strings.Join(parts, " ")
}

// blueGreenState says where a blue-green rollout's switch stands.
func blueGreenState(bg *v1alpha1.AppBlueGreenStatus, now time.Time) string {
	switch {
	case bg.SwitchedAt != nil:
		return "switched to the new version " + duration.HumanDuration(now.Sub(bg.SwitchedAt.Time)) + " ago"
	case bg.PreviewReadyAt != nil:
		return "preview ready " + duration.HumanDuration(now.Sub(bg.PreviewReadyAt.Time)) + " ago, not switched"
	}
	return "preview coming up"
}
