package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/step"
)

func newPlanCommand(kf *kubeFlags) *cobra.Command {
	var file, output string
	var cf catalogFlags
	cmd := &cobra.Command{
		Use:   "plan -f FILE | plan --to VERSION --catalog CATALOG",
		Short: "Validate an UpgradePlan, check it against the cluster, and show what each step touches; changes nothing",
		Long: `Validate an UpgradePlan file and, when a cluster is configured (--kubeconfig,
KUBECONFIG), check it against the cluster: every kind is served or defined by
the plan's CRDs, every namespace, workload and container exists, and the
credentials may do every write the plan needs (SelfSubjectRulesReview).
Every problem is reported at once with its field path.

Then preview every step: for each object, what will happen to it (create,
update, unchanged, delete, recreate, run) and a unified diff from the live
object to the server's dry run of the change (Secret values redacted); for
Helm steps, the diff of the release's manifest; and per stage, an estimate
of its duration from earlier runs on this cluster. A later stage is
previewed against the cluster as it is now: objects whose namespace or kind
an earlier step brings carry a note instead of a diff. Changes nothing.

With --to and --catalog instead of -f: detect the version the cluster runs,
find the path through the catalog's releases (see upshift upgrade), and
print the hops, each with its plan and preview. The first hop is checked
against the cluster as it is; a later hop is previewed against it too,
before the hops ahead of it have run, so its objects that an earlier hop
brings carry a note instead of a diff.

-o json or yaml prints the preview as data.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return fmt.Errorf("--output %q: use json or yaml (or leave it out for text)", output)
			}
			if cf.given() {
				if file != "" {
					return errors.New("-f and --to/--catalog: give a plan file, or a version of a catalog, not both")
				}
				if err := cf.validate(); err != nil {
					return err
				}
				return planHops(cmd, kf, &cf, output)
			}
			if file == "" {
				return errors.New("-f FILE is required: the UpgradePlan to check (or --to VERSION --catalog CATALOG)")
			}
			return planFile(cmd, kf, file, output)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "UpgradePlan file")
	cmd.Flags().StringVarP(&output, "output", "o", "", "print the preview as json or yaml")
	cf.add(cmd)
	return cmd
}

// planFile checks a plan file, against the cluster when one is
// configured, and prints its preview.
func planFile(cmd *cobra.Command, kf *kubeFlags, file, output string) error {
	p, err := loadAndResolve(cmd, file, kf)
	if err != nil {
		return err
	}
	notices := cmd.OutOrStdout()
	if output != "" {
		notices = cmd.ErrOrStderr() // stdout carries the data
	}
	for _, n := range controllerOnly(p.Plan.Spec, "plan") {
		fmt.Fprintln(notices, n)
	}
	cfg, err := kf.restConfig()
	if errors.Is(err, errNoCluster) {
		printPlan(cmd.OutOrStdout(), p.Plan, nil)
		fmt.Fprintln(cmd.OutOrStdout(), "no cluster configured (--kubeconfig or KUBECONFIG): checked the file only")
		return nil
	}
	if err != nil {
		return err
	}
	sess, err := runner.Open(cfg, kf.sessionOptions())
	if err != nil {
		return err
	}
	if errs := sess.Preflight(cmd.Context(), p); len(errs) > 0 {
		return preflightProblems(file, errs)
	}
	pv, err := sess.Preview(cmd.Context(), p)
	if err != nil {
		return err
	}
	if output != "" {
		return printObject(cmd.OutOrStdout(), pv, output)
	}
	printPlan(cmd.OutOrStdout(), p.Plan, pv)
	fmt.Fprintln(cmd.OutOrStdout(), "preflight passed: nothing was changed")
	return nil
}

// printPlan prints the plan's stages, steps and gates and, with a
// preview, each step's changes with their diffs and each stage's estimate.
func printPlan(out io.Writer, p *v1alpha1.UpgradePlan, pv *runner.PlanPreview) {
	p = redact.Plan(p)
	head := fmt.Sprintf("plan %s: target version %s, %d stage(s)", p.Name, p.Spec.Version, len(p.Spec.Stages))
	if pv != nil && pv.Estimate != "" {
		head += ", estimated " + pv.Estimate + " from earlier runs"
	}
	fmt.Fprintln(out, head)
	if len(p.Spec.Checks) > 0 {
		fmt.Fprintln(out, "checks before any change (when the run starts):")
		for _, g := range p.Spec.Checks {
			fmt.Fprintf(out, "   ? check %s\n", describeGate(g))
		}
	}
	for i, st := range p.Spec.Stages {
		line := fmt.Sprintf("%d. stage %s", i+1, st.Name)
		if pv != nil && pv.Stages[i].Estimate != "" {
			line += fmt.Sprintf(" (estimated %s, median of %d earlier %s)", pv.Stages[i].Estimate, pv.Stages[i].EstimateFrom, plural(pv.Stages[i].EstimateFrom, "run"))
		}
		fmt.Fprintln(out, line)
		for j, s := range st.Steps {
			fmt.Fprintf(out, "   - step %s: %s\n", s.Name, describeStep(s))
			if pv != nil {
				printChanges(out, pv.Stages[i].Steps[j].Changes)
			}
		}
		for _, g := range st.Gates {
			fmt.Fprintf(out, "   ? gate %s\n", describeGate(g))
		}
	}
}

func printChanges(out io.Writer, changes []step.Change) {
	for _, c := range changes {
		line := fmt.Sprintf("       %s %s", c.Action, c.Ref)
		if c.Note != "" {
			line += ": " + c.Note
		}
		fmt.Fprintln(out, line)
		if c.Diff == "" {
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(c.Diff, "\n"), "\n") {
			fmt.Fprintln(out, "           "+l)
		}
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func describeStep(s v1alpha1.Step) string {
	switch {
	case s.CRDs != nil:
		return "apply CRDs from " + describeSource(s.CRDs.Source)
	case s.Manifests != nil:
		return "apply manifests from " + describeSource(s.Manifests.Source)
	case s.Image != nil:
		var imgs []string
		for c, img := range s.Image.Images {
			imgs = append(imgs, c+"="+img)
		}
		sort.Strings(imgs)
		return fmt.Sprintf("set images of %s %s/%s: %s", s.Image.Kind, s.Image.Namespace, s.Image.Name, strings.Join(imgs, ", "))
	case s.Job != nil:
		d := "run the Job in " + describeSource(s.Job.Source)
		if s.Job.RollbackJob != nil {
			d += " (on rollback: " + describeSource(*s.Job.RollbackJob) + ")"
		}
		return d
	case s.Recreate != nil:
		return fmt.Sprintf("re-create %ss matching %q in namespaces %s", strings.ToLower(s.Recreate.Kind), s.Recreate.Selector, s.Recreate.Namespace)
	case s.Freeze != nil:
		return describeFreeze(s.Freeze)
	case s.Approval != nil:
		return "wait for `upshift approve`"
	case s.Pause != nil:
		return "pause " + s.Pause.Duration.Duration.String()
	case s.Helm != nil:
		d := fmt.Sprintf("install or upgrade Helm release %s/%s from %s", s.Helm.Namespace, s.Helm.Release, s.Helm.Chart)
		if len(s.Helm.ValuesFrom) > 0 {
			d += ", values from " + describeValuesFrom(s.Helm.ValuesFrom)
		}
		return d
	case s.Autopilot != nil:
		cmd := "k0supdate"
		if s.Autopilot.Airgap {
			cmd = "airgapupdate"
		}
		return fmt.Sprintf("upgrade k0s to %s on every node with an autopilot Plan (%s)", s.Autopilot.Version, cmd)
	case s.Distribute != nil:
		return fmt.Sprintf("copy the artifacts onto every node: a Job per node running %s", s.Distribute.Image)
	case s.ClusterConfig != nil:
		return fmt.Sprintf("update k0s's ClusterConfig: images, then %d override(s)", len(s.ClusterConfig.Overrides))
	case s.Installation != nil:
		return "record the upgrade's Installation as " + s.Installation.State
	case s.HelmUninstall != nil:
		return fmt.Sprintf("uninstall Helm release %s/%s, keeping its history for a rollback", s.HelmUninstall.Namespace, s.HelmUninstall.Release)
	}
	return "?"
}

// describeFreeze says what a freeze denies. The message is the plan's
// own words; printPlan prints the plan redacted.
func describeFreeze(f *v1alpha1.FreezeStep) string {
	d := "freeze " + f.Describe() + " until the run ends"
	if f.Message != "" {
		d += fmt.Sprintf(" (denied requests read %q)", f.Message)
	}
	return d
}

func describeSource(src v1alpha1.Source) string {
	switch {
	case src.Path != "":
		return src.Path
	case src.URL != "":
		return src.URL
	case src.ConfigMap != nil, src.Secret != nil:
		return source.Describe(src) // the name and key, never the content
	}
	return "inline YAML"
}

// describeValuesFrom names each entry, "configMap web-values/values.yaml",
// "secret db/values.yaml (optional)": names and keys, never the content.
func describeValuesFrom(refs []v1alpha1.ValuesReference) string {
	out := make([]string, len(refs))
	for i, r := range refs {
		key := r.ValuesKey
		if key == "" {
			key = v1alpha1.DefaultValuesKey
		}
		out[i] = source.DescribeRef(r.Kind, v1alpha1.ObjectKeyRef{Name: r.Name, Key: key})
		if r.Optional {
			out[i] += " (optional)"
		}
	}
	return strings.Join(out, ", ")
}

func describeGate(g v1alpha1.Gate) string {
	d := engine.GateName(g, 0)
	if g.Severity != "" && g.Severity != v1alpha1.SeverityBlocking {
		d += " (" + string(g.Severity) + ")"
	}
	return d
}
