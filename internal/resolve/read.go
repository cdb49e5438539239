package resolve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/source"
)

// Read reads and decodes every source of a validated plan. objs reads
// the ConfigMaps and Secrets that configMap, secret and valuesFrom
// sources name, from the plan's namespace (see SourceEnv), with the
// credentials the plan acts with; nil: such sources are an error
// (source.ErrNoObjects) and every other source reads as before. Errors
// name the source's field path.
func Read(ctx context.Context, l *plan.Loaded, objs source.Objects) (*Plan, error) {
	env := SourceEnv(l, objs)
	// Refused before any source is read, so the message names the field.
	if err := checkSchemes(l.Plan, env.AllowHTTP); err != nil {
		return nil, err
	}
	sources := map[string][]byte{}
	for i, st := range l.Plan.Spec.Stages {
		for j, s := range st.Steps {
			if s.Helm != nil {
				if err := readHelm(ctx, sources, i, j, s.Helm, env); err != nil {
					return nil, err
				}
				continue
			}
			for _, ps := range stepSources(i, j, s) {
				b, err := source.Read(ctx, ps.src, env)
				if err != nil {
					return nil, fmt.Errorf("%s%s: %w", ps.path, refField(ps.src), err)
				}
				sources[ps.path] = b
			}
		}
	}
	return FromSources(l.Plan, sources)
}

// SourceEnv is where a plan's sources are read: paths relative to its
// file, ConfigMaps and Secrets in its namespace (metadata.namespace; for
// a plan file that sets none, "default", as kubectl would take it);
// http:// when the plan or the driver allows it.
func SourceEnv(l *plan.Loaded, objs source.Objects) source.Env {
	env := source.Env{BaseDir: l.BaseDir, Namespace: l.Plan.Namespace, Objects: objs,
		AllowHTTP: l.AllowHTTP || l.Plan.Spec.AllowInsecureHTTP}
	if env.Namespace == "" {
		env.Namespace, env.NamespaceDefaulted = "default", true
	}
	return env
}

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
