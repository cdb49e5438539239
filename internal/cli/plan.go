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
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/step"
)

func newPlanCommand(kf *kubeFlags) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "plan -f FILE",
		Short: "Validate an UpgradePlan, check it against the cluster, and show what each step touches; changes nothing",
		Long: `Validate an UpgradePlan file and, when a cluster is configured (--kubeconfig,
KUBECONFIG), check it against the cluster: every kind is served or defined by
the plan's CRDs, every namespace, workload and container exists, and the
credentials may do every write the plan needs (SelfSubjectAccessReview).
Then print the ordered stages, steps and gates and the objects each step will
touch. Every problem is reported at once with its field path. Changes nothing.

Not built yet: the per-object diff preview.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("-f FILE is required: the UpgradePlan to check")
			}
			p, err := loadAndResolve(cmd, file)
			if err != nil {
				return err
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
			sess, err := runner.Open(cfg, runner.Options{})
			if err != nil {
				return err
			}
			if errs := sess.Preflight(cmd.Context(), p); len(errs) > 0 {
				return preflightProblems(file, errs)
			}
			targets, err := sess.Targets(cmd.Context(), p)
			if err != nil {
				return err
			}
			printPlan(cmd.OutOrStdout(), p.Plan, targets)
			fmt.Fprintln(cmd.OutOrStdout(), "preflight passed: nothing was changed")
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "UpgradePlan file")
	return cmd
}

func printPlan(out io.Writer, p *v1alpha1.UpgradePlan, targets [][][]step.Ref) {
	fmt.Fprintf(out, "plan %s: target version %s, %d stage(s)\n", p.Name, p.Spec.Version, len(p.Spec.Stages))
	for i, st := range p.Spec.Stages {
		fmt.Fprintf(out, "%d. stage %s\n", i+1, st.Name)
		for j, s := range st.Steps {
			fmt.Fprintf(out, "   - step %s: %s\n", s.Name, describeStep(s))
			if targets != nil {
				for _, r := range targets[i][j] {
					fmt.Fprintf(out, "       touches %s\n", r)
				}
			}
		}
		for _, g := range st.Gates {
			fmt.Fprintf(out, "   ? gate %s\n", describeGate(g))
		}
	}
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
	case s.Approval != nil:
		return "wait for `upshift approve`"
	case s.Pause != nil:
		return "pause " + s.Pause.Duration.Duration.String()
	case s.Helm != nil:
		return fmt.Sprintf("install or upgrade Helm release %s/%s from %s", s.Helm.Namespace, s.Helm.Release, s.Helm.Chart)
	}
	return "?"
}

func describeSource(src v1alpha1.Source) string {
	switch {
	case src.Path != "":
		return src.Path
	case src.URL != "":
		return src.URL
	}
	return "inline YAML"
}

func describeGate(g v1alpha1.Gate) string {
	d := engine.GateName(g, 0)
	if g.Severity != "" && g.Severity != v1alpha1.SeverityBlocking {
		d += " (" + string(g.Severity) + ")"
	}
	return d
}
