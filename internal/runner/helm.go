package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/source"
)

// readHelm fetches a helm step's chart (as an archive) and reads its
// values files and valuesFrom into sources: the run record keeps them, so
// any machine can resume the run without the chart's directory,
// repository or registry, and with the values as they were read when the
// run started.
func readHelm(ctx context.Context, sources map[string][]byte, stage, step int, h *v1alpha1.HelmStep, env source.Env) error {
	path := HelmChartPath(stage, step)
	b, err := helmx.FetchChart(ctx, helmx.ChartRef{Chart: h.Chart, Repo: h.Repo, Version: h.Version, AllowHTTP: env.AllowHTTP}, env.BaseDir)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	sources[path] = b
	for k, f := range h.ValuesFiles {
		vp := HelmValuesPath(stage, step, k)
		if !filepath.IsAbs(f) {
			f = filepath.Join(env.BaseDir, f)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("%s: %w", vp, err)
		}
		sources[vp] = b
	}
	for k, ref := range h.ValuesFrom {
		vp := HelmValuesFromPath(stage, step, k)
		b, found, err := source.Values(ctx, ref, env)
		if err != nil {
			return fmt.Errorf("%s: %w", vp, err)
		}
		if !found {
			continue // optional, and missing: nothing to merge
		}
		if err := valuesMap(ref, b); err != nil {
			return fmt.Errorf("%s: %w", vp, err)
		}
		sources[vp] = b
	}
	return nil
}

// valuesMap checks that a valuesFrom entry holds a YAML map of values,
// without quoting a Secret's content.
func valuesMap(ref v1alpha1.ValuesReference, b []byte) error {
	if _, err := helmx.MergeValues([][]byte{b}, nil); err != nil {
		key := ref.ValuesKey
		if key == "" {
			key = v1alpha1.DefaultValuesKey
		}
		what := source.DescribeRef(ref.Kind, v1alpha1.ObjectKeyRef{Name: ref.Name, Key: key})
		if ref.Kind == source.KindSecret {
			return fmt.Errorf("%s is not a YAML map of Helm values (the parser's message is not shown: it may quote the Secret)", what)
		}
		return fmt.Errorf("%s is not a YAML map of Helm values: %w", what, err)
	}
	return nil
}

// helmInputs loads a helm step's chart and merges its values from the
// resolved sources.
func (r *Resolved) helmInputs(stage, step int) (*helmx.Chart, map[string]any, error) {
	b, ok := r.Sources[HelmChartPath(stage, step)]
	if !ok {
		return nil, nil, fmt.Errorf("the chart of step %s is not saved with the run: apply the plan again to save it", r.Plan.Spec.Stages[stage].Steps[step].Name)
	}
	ch, err := helmx.LoadArchive(b)
	if err != nil {
		return nil, nil, err
	}
	values, err := r.helmValues(stage, step)
	if err != nil {
		return nil, nil, err
	}
	return ch, values, nil
}

// helmValues merges a helm step's values as Flux merges a HelmRelease's:
// the values files in order, then valuesFrom in order (an optional entry
// that found nothing is skipped), then the inline values, each over the
// ones before.
func (r *Resolved) helmValues(stage, step int) (map[string]any, error) {
	h := r.Plan.Spec.Stages[stage].Steps[step].Helm
	var files [][]byte
	for k := range h.ValuesFiles {
		files = append(files, r.Sources[HelmValuesPath(stage, step, k)])
	}
	for k := range h.ValuesFrom {
		if b, ok := r.Sources[HelmValuesFromPath(stage, step, k)]; ok {
			files = append(files, b)
		}
	}
	var inline []byte
	if h.Values != nil {
		inline = h.Values.Raw
	}
	return helmx.MergeValues(files, inline)
}
