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
	"github.com/upshift-dev/upshift/internal/engine"
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
	// From is the version the run starts from when its driver knows it
	// (a catalog hop: the version detected, or the hop before's); empty:
	// the last run that succeeded on the cluster says (engine.FromVersion).
	From string
	// pack is the sources packed for the run store (sources_pack.go).
	pack *sourcesPack
}

// RunName is the name of the plan's run (engine.RunName): keyed by the
// plan's namespace and name.
func (p *Resolved) RunName() string { return engine.RunOf(p.Plan) }

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

// HelmValuesFromPath keys a helm step's k-th valuesFrom entry (absent
// when the entry is optional and found nothing).
func HelmValuesFromPath(stage, step, k int) string {
	return fmt.Sprintf("spec.stages[%d].steps[%d].helm.valuesFrom[%d]", stage, step, k)
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

// planSource is one source of a step and the field path that keys it.
type planSource struct {
	path string
	src  v1alpha1.Source
}

// stepSources are a step's sources: its main one and a job's rollbackJob.
func stepSources(stage, step int, s v1alpha1.Step) []planSource {
	src, ok := stepSource(s)
	if !ok {
		return nil
	}
	out := []planSource{{SourcePath(stage, step, s), src}}
	if s.Job != nil && s.Job.RollbackJob != nil {
		out = append(out, planSource{RollbackJobPath(stage, step), *s.Job.RollbackJob})
	}
	return out
}

// refField is the field of a source that names a ConfigMap or a Secret,
// for messages (".configMap", ".secret"; "" for the other kinds, whose
// messages name themselves).
func refField(src v1alpha1.Source) string {
	switch {
	case src.ConfigMap != nil:
		return ".configMap"
	case src.Secret != nil:
		return ".secret"
	}
	return ""
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

// Resolve reads and decodes every source of a validated plan. objs reads
// the ConfigMaps and Secrets that configMap, secret and valuesFrom
// sources name, from the plan's namespace (see SourceEnv), with the
// credentials the plan acts with; nil: such sources are an error
// (source.ErrNoObjects) and every other source reads as before. Errors
// name the source's field path.
func Resolve(ctx context.Context, l *plan.Loaded, objs source.Objects) (*Resolved, error) {
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

// FromSources rebuilds a Resolved plan from saved source contents.
func FromSources(p *v1alpha1.UpgradePlan, sources map[string][]byte) (*Resolved, error) {
	r := &Resolved{Plan: p, Sources: sources, Objects: map[string][]*unstructured.Unstructured{}, SourceDigests: map[string]string{}}
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
