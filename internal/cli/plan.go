package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
)

func newPlanCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "plan -f FILE",
		Short: "Validate an UpgradePlan and show its stages and steps; changes nothing",
		Long: `Validate an UpgradePlan file and print its ordered stages, steps and gates.

Every problem is reported at once with its field path. Changes nothing.
Not built yet: cluster preflight (objects exist, permissions) and the diff
preview; this command checks the file only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("-f FILE is required: the UpgradePlan to check")
			}
			l, err := plan.Load(file)
			if err != nil {
				return err
			}
			if errs := plan.Validate(l); len(errs) > 0 {
				var b strings.Builder
				fmt.Fprintf(&b, "%s: %d problem(s), nothing was changed:", file, len(errs))
				for _, e := range errs {
					fmt.Fprintf(&b, "\n  %s", e.Error())
				}
				return errors.New(b.String())
			}
			printPlan(cmd.OutOrStdout(), l.Plan)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "UpgradePlan file")
	return cmd
}

func printPlan(out io.Writer, p *v1alpha1.UpgradePlan) {
	fmt.Fprintf(out, "plan %s: target version %s, %d stage(s)\n", p.Name, p.Spec.Version, len(p.Spec.Stages))
	for i, st := range p.Spec.Stages {
		fmt.Fprintf(out, "%d. stage %s\n", i+1, st.Name)
		for _, s := range st.Steps {
			fmt.Fprintf(out, "   - step %s: %s\n", s.Name, describeStep(s))
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
	switch {
	case g.Ready != nil:
		target := g.Ready.Name
		if target == "" {
			target = "matching " + g.Ready.Selector
		}
		return fmt.Sprintf("ready: %s %s %s", g.Ready.Kind, g.Ready.Namespace, target)
	case g.HTTP != nil:
		return "http: GET " + g.HTTP.URL
	}
	return "?"
}
