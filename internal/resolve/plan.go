package resolve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/source"
)

// Plan is a plan with every source read and decoded: what a run
// executes, independent of the files it came from, so any machine can
// resume it from the copy kept in the cluster.
type Plan struct {
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
	// From is the version the run starts from when its driver knows it
	// (a catalog hop: the version detected, or the hop before's); empty:
	// the last run that succeeded on the cluster says (engine.FromVersion).
	From string
	// pack is the sources packed for the run store (pack.go).
	pack *sourcesPack
}

// RunName is the name of the plan's run (engine.RunName): keyed by the
// plan's namespace and name.
func (p *Plan) RunName() string { return engine.RunOf(p.Plan) }

// FromSources rebuilds a Plan from saved source contents.
func FromSources(p *v1alpha1.UpgradePlan, sources map[string][]byte) (*Plan, error) {
	r := &Plan{Plan: p, Sources: sources, Objects: map[string][]*unstructured.Unstructured{}, SourceDigests: map[string]string{}}
	fromSecrets := secretSources(p)
	for path, b := range sources {
		r.SourceDigests[path] = source.Digest(b)
		if isHelmSource(path) {
			continue
		}
		decode := source.Decode
		if fromSecrets[path] {
			decode = source.DecodeSecret
		}
		objs, err := decode(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r.Objects[path] = objs
	}
	r.Digest = planDigest(p.Spec, r.SourceDigests)
	return r, nil
}

// planDigest hashes the spec (its JSON, which sorts map keys) and the
// sources' digests in path order. serviceAccountName, suspend and windows
// are left out: they say how and when the plan runs, not what it does,
// so setting them in a plan file is no change of its content (a run goes
// on, a finished one is not refused as other content).
func planDigest(spec v1alpha1.UpgradePlanSpec, sources map[string]string) string {
	spec.ServiceAccountName, spec.Suspend, spec.Windows = "", false, nil
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

// ObjectsFor returns the decoded objects of a step's source (nil for kinds
// without one).
func (r *Plan) ObjectsFor(stage, step int) []*unstructured.Unstructured {
	s := r.Plan.Spec.Stages[stage].Steps[step]
	if _, ok := stepSource(s); !ok {
		return nil
	}
	return r.Objects[SourcePath(stage, step, s)]
}

// HelmInputs loads a helm step's chart and merges its values from the
// resolved sources.
func (r *Plan) HelmInputs(stage, step int) (*helmx.Chart, map[string]any, error) {
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
func (r *Plan) helmValues(stage, step int) (map[string]any, error) {
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
