package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The functions below copy what they change and share the rest with their
// argument (the API types have no generated DeepCopy): the argument is
// never changed, and the copy must not be written to.

// Run returns a copy of r fit to print: its plan through [PlanSpec], and
// its status through [RunStatus].
func Run(r *v1alpha1.UpgradeRun) *v1alpha1.UpgradeRun {
	if r == nil {
		return nil
	}
	out := *r
	out.Spec.Plan = PlanSpec(r.Spec.Plan)
	out.Status = RunStatus(r.Status)
	return &out
}

// RunStatus returns a copy of st fit to print or store: every message of
// the run, its checks, stages, steps, gates and rollback differences, and
// every gate's and check's name, through [Text].
func RunStatus(st v1alpha1.RunStatus) v1alpha1.RunStatus {
	st.Message, st.Failure = Text(st.Message), Text(st.Failure)
	st.Stages = slices.Clone(st.Stages)
	for i := range st.Stages {
		ss := &st.Stages[i]
		ss.Message = Text(ss.Message)
		ss.Steps = slices.Clone(ss.Steps)
		for j := range ss.Steps {
			ss.Steps[j].Message = Text(ss.Steps[j].Message)
		}
		ss.Gates = slices.Clone(ss.Gates)
		for j := range ss.Gates {
			ss.Gates[j].Name = Text(ss.Gates[j].Name)
			ss.Gates[j].Message = Text(ss.Gates[j].Message)
		}
		if ss.Rollback != nil {
			rb := *ss.Rollback
			rb.Differences = slices.Clone(rb.Differences)
			for j := range rb.Differences {
				rb.Differences[j] = Text(rb.Differences[j])
			}
			ss.Rollback = &rb
		}
	}
	st.Checks = slices.Clone(st.Checks)
	for i := range st.Checks {
		st.Checks[i].Name = Text(st.Checks[i].Name)
		st.Checks[i].Message = Text(st.Checks[i].Message)
	}
	st.Conditions = slices.Clone(st.Conditions)
	for i := range st.Conditions {
		st.Conditions[i].Message = Text(st.Conditions[i].Message)
	}
	return st
}

// Runs is [Run] of each.
func Runs(runs []v1alpha1.UpgradeRun) []*v1alpha1.UpgradeRun {
	out := make([]*v1alpha1.UpgradeRun, len(runs))
	for i := range runs {
		out[i] = Run(&runs[i])
	}
	return out
}

// Plan returns a copy of p fit to print (see [PlanSpec]).
func Plan(p *v1alpha1.UpgradePlan) *v1alpha1.UpgradePlan {
	if p == nil {
		return nil
	}
	out := *p
	out.Spec = PlanSpec(p.Spec)
	return &out
}

// PlanSpec returns a copy of spec in which every inline source (of any
// step kind) is replaced by its size and digest ([Inline]), every Helm
// value by [Hidden] (the keys stay, so a reader sees what is set), and
// every URL (sources, http gates, Helm chart repositories, chart URLs and
// OCI references) goes through [URL].
func PlanSpec(spec v1alpha1.UpgradePlanSpec) v1alpha1.UpgradePlanSpec {
	out := spec
	out.Stages = slices.Clone(spec.Stages)
	for i := range out.Stages {
		st := &out.Stages[i]
		st.Steps = slices.Clone(st.Steps)
		for j := range st.Steps {
			step(&st.Steps[j])
		}
		st.Gates = gates(st.Gates)
	}
	out.Checks = gates(spec.Checks)
	return out
}

// gates is a copy of gs whose URLs went through [URL]: of the gates, only
// http ones and metric ones carry a secret (in a URL); an envKept gate
// lists variable names, never their values.
func gates(gs []v1alpha1.Gate) []v1alpha1.Gate {
	gs = slices.Clone(gs)
	for j := range gs {
		if h := gs[j].HTTP; h != nil {
			c := *h
			c.URL = URL(h.URL)
			gs[j].HTTP = &c
		}
		if m := gs[j].Metric; m != nil {
			c := *m
			if p := m.Provider.Prometheus; p != nil {
				cp := *p
				cp.Address = URL(p.Address)
				c.Provider.Prometheus = &cp
			}
			if w := m.Provider.Web; w != nil {
				cw := *w
				cw.URL = URL(w.URL)
				c.Provider.Web = &cw
			}
			gs[j].Metric = &c
		}
	}
	return gs
}

// step redacts a copy of s's kind in place of it.
func step(s *v1alpha1.Step) {
	switch {
	case s.CRDs != nil:
		c := *s.CRDs
		c.Source = source(c.Source)
		s.CRDs = &c
	case s.Manifests != nil:
		c := *s.Manifests
		c.Source = source(c.Source)
		s.Manifests = &c
	case s.Job != nil:
		c := *s.Job
		c.Source = source(c.Source)
		if c.RollbackJob != nil {
			rb := source(*c.RollbackJob)
			c.RollbackJob = &rb
		}
		s.Job = &c
	case s.Recreate != nil:
		c := *s.Recreate
		if c.From != nil {
			from := source(*c.From)
			c.From = &from
		}
		s.Recreate = &c
	case s.Freeze != nil:
		c := *s.Freeze
		c.Message = Text(c.Message)
		s.Freeze = &c
	case s.Helm != nil:
		c := *s.Helm
		c.Chart = Chart(c.Chart)
		if c.Repo != "" {
			c.Repo = URL(c.Repo)
		}
		c.Values = Values(c.Values)
		s.Helm = &c
	case s.Distribute != nil:
		s.Distribute = distribute(*s.Distribute)
	}
}

// distribute hides a distribute step's env values (often credentials, as
// a pod's inline env) and the credentials of its artifacts' URLs.
func distribute(c v1alpha1.DistributeStep) *v1alpha1.DistributeStep {
	if c.Env != nil {
		env := make([]v1alpha1.NameValue, len(c.Env))
		for i, e := range c.Env {
			env[i] = v1alpha1.NameValue{Name: e.Name, Value: hidden(e.Value, false, "")}
		}
		c.Env = env
	}
	if c.Artifacts != nil {
		arts := make(map[string]string, len(c.Artifacts))
		for k, v := range c.Artifacts {
			arts[k] = URL(v)
		}
		c.Artifacts = arts
	}
	return &c
}

func source(src v1alpha1.Source) v1alpha1.Source {
	if src.Inline != "" {
		src.Inline = Inline(src.Inline)
	}
	if src.URL != "" {
		src.URL = URL(src.URL)
	}
	return src
}

// Inline names an inline source by its size and digest: the digest is the
// one the run records for the source (SHA-256 of its bytes), so a reader
// can match the two without seeing the content. A name made by Inline is
// kept as it is: a plan read from a run record is redacted already, and
// printing it must still show the source's own size and digest.
func Inline(content string) string {
	if inlineName.MatchString(content) {
		return content
	}
	sum := sha256.Sum256([]byte(content))
	return fmt.Sprintf("<inline, %d bytes, sha256:%s>", len(content), hex.EncodeToString(sum[:]))
}

// inlineName matches what Inline makes.
var inlineName = regexp.MustCompile(`^<inline, [0-9]+ bytes, sha256:[0-9a-f]{64}>$`)

// hiddenJSON stands for values that are not a JSON document.
var hiddenJSON = []byte(`"` + Hidden + `"`)

// Values keeps the keys of Helm values and hides every value under them
// (lists keep their length, null stays: it only unsets a chart default).
// Values that are not a JSON document are hidden whole.
func Values(v *apiextensionsv1.JSON) *apiextensionsv1.JSON {
	if v == nil {
		return nil
	}
	var tree any
	if err := json.Unmarshal(v.Raw, &tree); err != nil {
		return &apiextensionsv1.JSON{Raw: hiddenJSON}
	}
	b, err := json.Marshal(hideLeaves(tree))
	if err != nil { // cannot happen: a tree decoded from JSON encodes again
		return &apiextensionsv1.JSON{Raw: hiddenJSON}
	}
	return &apiextensionsv1.JSON{Raw: b}
}

func hideLeaves(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = hideLeaves(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = hideLeaves(e)
		}
		return out
	case nil:
		return nil
	}
	return Hidden
}
