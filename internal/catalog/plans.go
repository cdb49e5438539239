package catalog

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/semver/v3"
	"github.com/Masterminds/sprig/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/internal/plan"
)

// TemplateData is what a plan template is filled with.
type TemplateData struct {
	// Version is the release's version, normalised ("1.1.0"); Tag is it
	// as the catalog writes it ("v1.1.0"), as image tags often are.
	Version, Tag string
	// Major, Minor and Patch are the release version's numbers.
	Major, Minor, Patch uint64
	// From and FromTag are the version the hop starts from ("" for an
	// install).
	From, FromTag string
	// Catalog is the catalog's metadata.name.
	Catalog string
	// Values are the catalog's spec.values with the driver's overrides.
	Values map[string]string
}

// InvalidError is a catalog or a plan of it that fails validation.
type InvalidError struct {
	Where string
	Errs  field.ErrorList
}

func (e *InvalidError) Error() string {
	if len(e.Errs) == 1 {
		return e.Where + ": " + e.Errs[0].Error()
	}
	lines := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		lines[i] = err.Error()
	}
	return fmt.Sprintf("%s: %d problems:\n  %s", e.Where, len(e.Errs), strings.Join(lines, "\n  "))
}

// PlanFor is the validated plan that brings a cluster from `from` (nil:
// nothing installed, or not known) to the release at version v: the
// release's plan file, or the catalog's template filled with both
// versions. Its spec.version must be v: a plan that says another version
// would record the hop under the wrong one.
func (c *Catalog) PlanFor(ctx context.Context, v, from *semver.Version) (*plan.Loaded, error) {
	r, ok := c.Release(v)
	if !ok {
		return nil, fmt.Errorf("catalog %s lists no release %s", c.Where, v)
	}
	name, templated := r.Plan, false
	if name == "" {
		name, templated = c.Spec.PlanTemplate, true
	}
	b, err := c.files.read(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: release %s: plan %s: %w", c.Where, r.Version, name, err)
	}
	where := c.files.describe(name)
	if templated {
		where = fmt.Sprintf("%s (for %s)", where, r.Version)
		if b, err = render(name, b, c.templateData(r, v, from)); err != nil {
			return nil, fmt.Errorf("catalog %s: spec.planTemplate %s for release %s: %w", c.Where, name, r.Version, err)
		}
	}
	l, err := plan.Decode(where, b, c.files.baseDir(name))
	if err != nil {
		return nil, err
	}
	var errs field.ErrorList
	if l.BaseDir == "" {
		errs = plan.ValidateInCluster(l.Plan)
	} else {
		errs = plan.Validate(l)
	}
	if pv, err := semver.NewVersion(l.Plan.Spec.Version); err != nil || !pv.Equal(v) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "version"), l.Plan.Spec.Version,
			fmt.Sprintf("the catalog lists this plan for release %s: make the plan's version %s", r.Version, r.Version)))
	}
	if len(errs) > 0 {
		return nil, &InvalidError{Where: where, Errs: errs}
	}
	return l, nil
}

func (c *Catalog) templateData(r Release, v, from *semver.Version) TemplateData {
	d := TemplateData{Version: v.String(), Tag: r.Version, Major: v.Major(), Minor: v.Minor(), Patch: v.Patch(), Catalog: c.Name, Values: c.Values()}
	if from != nil {
		d.From, d.FromTag = from.String(), from.Original()
		if fr, ok := c.Release(from); ok {
			d.FromTag = fr.Version
		}
	}
	return d
}

// render fills a plan template. Its functions are Helm's (sprig's) less
// those that read the environment, as in a chart's templates, so what a
// template makes depends on the catalog and the versions only. A key the
// data lacks is an error, not "<no value>" in a plan.
func render(name string, b []byte, data TemplateData) ([]byte, error) {
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(string(b))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Values are the template's values: the catalog's defaults, over them
// what spec.valuesFrom read from the cluster (ReadValues), over those the
// overrides SetValues took.
func (c *Catalog) Values() map[string]string {
	out := make(map[string]string, len(c.Spec.Values))
	for k, v := range c.Spec.Values {
		out[k] = v
	}
	for k, v := range c.fromCluster {
		out[k] = v
	}
	for k, v := range c.overrides {
		out[k] = v
	}
	return out
}

// SetValues overrides the catalog's values; a name it does not declare
// in spec.values is refused, naming those it does.
func (c *Catalog) SetValues(over map[string]string) error {
	for k := range over {
		if _, ok := c.Spec.Values[k]; !ok {
			names := make([]string, 0, len(c.Spec.Values))
			for n := range c.Spec.Values {
				names = append(names, n)
			}
			sort.Strings(names)
			declared := "it declares none"
			if len(names) > 0 {
				declared = "its values are " + strings.Join(names, ", ")
			}
			return fmt.Errorf("value %q: catalog %s does not declare it in spec.values (%s)", k, c.Where, declared)
		}
	}
	c.overrides = over
	return nil
}
