package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/internal/clients"
)

// validateValuesFrom checks spec.valuesFrom: each names a declared value,
// once, and one source.
func validateValuesFrom(path *field.Path, c *ReleaseCatalog) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, v := range c.Spec.ValuesFrom {
		p := path.Index(i)
		switch _, declared := c.Spec.Values[v.Value]; {
		case v.Value == "":
			errs = append(errs, field.Required(p.Child("value"), "the name of a value of spec.values"))
		case !declared:
			errs = append(errs, field.Invalid(p.Child("value"), v.Value, "declare it in spec.values, with its default"))
		case seen[v.Value]:
			errs = append(errs, field.Duplicate(p.Child("value"), v.Value))
		}
		seen[v.Value] = true
		switch {
		case v.Installation == nil:
			errs = append(errs, field.Required(p.Child("installation"), "where the value is read: installation: {field: spec.airGap}"))
		case v.Installation.Field == "":
			errs = append(errs, field.Required(p.Child("installation", "field"), "the Installation's field, dotted: spec.highAvailability"))
		}
	}
	return errs
}

// ReadValues reads spec.valuesFrom from the cluster; Values then has
// them over their defaults. A value whose source is absent (nothing
// installed yet, no such field) keeps its default; what was read is
// returned as lines for the solution's description.
func (c *Catalog) ReadValues(ctx context.Context, cs *clients.Set) ([]string, error) {
	if len(c.Spec.ValuesFrom) == 0 {
		return nil, nil
	}
	in, err := newestInstalled(ctx, cs)
	if errors.Is(err, errMissing) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spec.valuesFrom: %w", err)
	}
	c.fromCluster = map[string]string{}
	var read []string
	for _, v := range c.Spec.ValuesFrom {
		path := strings.Split(strings.TrimPrefix(v.Installation.Field, "."), ".")
		got, found, err := unstructured.NestedFieldNoCopy(in.Object, path...)
		if err != nil || !found || got == nil {
			continue
		}
		s, ok := scalar(got)
		if !ok {
			return nil, fmt.Errorf("spec.valuesFrom: %s of Installation %s is not a string, a number or a bool: name a field that is", v.Installation.Field, in.GetName())
		}
		c.fromCluster[v.Value] = s
		line := fmt.Sprintf("%s=%s (%s of Installation %s)", v.Value, s, v.Installation.Field, in.GetName())
		if o, ok := c.overrides[v.Value]; ok {
			line += fmt.Sprintf(", overridden: %s=%s", v.Value, o)
		}
		read = append(read, line)
	}
	return read, nil
}

// scalar writes a JSON scalar as a value's text.
func scalar(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case bool, int64, float64:
		return fmt.Sprint(t), true
	}
	return "", false
}
