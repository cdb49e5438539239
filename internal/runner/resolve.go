package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/source"
)

// Resolved is a plan with every source read and decoded: what a run
// executes, independent of the files it came from, so any machine can
// resume it from the copy kept in the cluster.
type Resolved struct {
	Plan *v1alpha1.UpgradePlan
	// Sources holds each source's bytes by the field path of its step
	// ("spec.stages[0].steps[0].crds").
	Sources map[string][]byte
	// Objects are the decoded Sources.
	Objects map[string][]*unstructured.Unstructured
	// Digest covers the spec and every source's content.
	Digest        string
	SourceDigests map[string]string
	// SourcesErr is why a rollback could not read the sources saved with
	// its run (nil when it could, or when they were not needed); it is
	// reported by the first undo that needs them.
	SourcesErr error
}

// SourcePath is the field path that keys a step's (main) source.
func SourcePath(stage, step int, s v1alpha1.Step) string {
	kind := "manifests"
	switch {
	case s.CRDs != nil:
		kind = "crds"
	case s.Job != nil:
		kind = "job"
	case s.Recreate != nil:
		kind = "recreate.from"
	}
	return fmt.Sprintf("spec.stages[%d].steps[%d].%s", stage, step, kind)
}

// HelmChartPath keys a helm step's chart archive (.tgz bytes).
func HelmChartPath(stage, step int) string {
	return fmt.Sprintf("spec.stages[%d].steps[%d].helm.chart", stage, step)
}

// HelmValuesPath keys a helm step's k-th values file.
func HelmValuesPath(stage, step, k int) string {
	return fmt.Sprintf("spec.stages[%d].steps[%d].helm.valuesFiles[%d]", stage, step, k)
}

// isHelmSource tells the sources that are not Kubernetes objects: charts
// and values files, kept as bytes.
func isHelmSource(path string) bool { return strings.Contains(path, ".helm.") }

// RollbackJobPath keys a job step's rollbackJob source.
func RollbackJobPath(stage, step int) string {
	return fmt.Sprintf("spec.stages[%d].steps[%d].job.rollbackJob", stage, step)
}

func stepSource(s v1alpha1.Step) (v1alpha1.Source, bool) {
	switch {
	case s.CRDs != nil:
		return s.CRDs.Source, true
	case s.Manifests != nil:
		return s.Manifests.Source, true
	case s.Job != nil:
		return s.Job.Source, true
	case s.Recreate != nil && s.Recreate.From != nil:
		return *s.Recreate.From, true
	}
	return v1alpha1.Source{}, false
}

// Resolve reads and decodes every source of a validated plan. Errors name
// the source's field path.
func Resolve(ctx context.Context, l *plan.Loaded) (*Resolved, error) {
	sources := map[string][]byte{}
	for i, st := range l.Plan.Spec.Stages {
		for j, s := range st.Steps {
			if s.Helm != nil {
				if err := readHelm(ctx, sources, i, j, s.Helm, l.BaseDir); err != nil {
					return nil, err
				}
				continue
			}
			src, ok := stepSource(s)
			if !ok {
				continue
			}
			path := SourcePath(i, j, s)
			b, err := source.Read(ctx, src, source.Env{BaseDir: l.BaseDir})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			sources[path] = b
			if s.Job != nil && s.Job.RollbackJob != nil {
				rp := RollbackJobPath(i, j)
				b, err := source.Read(ctx, *s.Job.RollbackJob, source.Env{BaseDir: l.BaseDir})
				if err != nil {
					return nil, fmt.Errorf("%s: %w", rp, err)
				}
				sources[rp] = b
			}
		}
	}
	return FromSources(l.Plan, sources)
}

// FromSources rebuilds a Resolved plan from saved source contents.
func FromSources(p *v1alpha1.UpgradePlan, sources map[string][]byte) (*Resolved, error) {
	r := &Resolved{Plan: p, Sources: sources, Objects: map[string][]*unstructured.Unstructured{}, SourceDigests: map[string]string{}}
	for path, b := range sources {
		r.SourceDigests[path] = source.Digest(b)
		if isHelmSource(path) {
			continue
		}
		objs, err := source.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r.Objects[path] = objs
	}
	r.Digest = planDigest(p.Spec, r.SourceDigests)
	return r, nil
}

// planDigest hashes the spec (its JSON, which sorts map keys) and the
// sources' digests in path order. serviceAccountName and suspend are left
// out: they say how the controller runs the plan, not what the plan does,
// so setting them in a plan file is no change of its content (a run goes
// on, a finished one is not refused as other content).
func planDigest(spec v1alpha1.UpgradePlanSpec, sources map[string]string) string {
	spec.ServiceAccountName, spec.Suspend = "", false
	h := sha256.New()
	b, _ := json.Marshal(spec) // plain structs: cannot fail
	h.Write(b)
	paths := make([]string, 0, len(sources))
	for p := range sources {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(h, "\n%s=%s", p, sources[p])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// objectsFor returns the decoded objects of a step's source (nil for kinds
// without one).
func (r *Resolved) objectsFor(stage, step int) []*unstructured.Unstructured {
	s := r.Plan.Spec.Stages[stage].Steps[step]
	if _, ok := stepSource(s); !ok {
		return nil
	}
	return r.Objects[SourcePath(stage, step, s)]
}
