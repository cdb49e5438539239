package envkept

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Change is one variable that is not as it was before the stage. What
// says how it changed without its value: "value changed", "removed (was
// valueFrom configMapKeyRef demo/logLevel)", "added (a value)".
type Change struct {
	Name string
	What string
}

func (c Change) String() string { return c.Name + " " + c.What }

// Diff compares the variables a container had (before) with those it has
// (after): the variables of names, or, when names is empty, every variable
// either list holds. Order does not matter; of entries sharing a name the
// last counts, as for the kubelet. Changes are sorted by name.
func Diff(before, after []corev1.EnvVar, names []string) []Change {
	was, is := effective(before), effective(after)
	if len(names) == 0 {
		names = union(was, is)
	}
	var out []Change
	for _, n := range sortedUnique(names) {
		a, inA := was[n]
		b, inB := is[n]
		switch {
		case !inA && !inB:
		case !inB:
			out = append(out, Change{n, "removed (was " + source(a) + ")"})
		case !inA:
			out = append(out, Change{n, "added (" + source(b) + ")"})
		default:
			if what := changed(a, b); what != "" {
				out = append(out, Change{n, what})
			}
		}
	}
	return out
}

// Unset lists, sorted, the names that neither list holds: kept, since
// nothing changed, but more often a misspelt name than a variable to come.
func Unset(before, after []corev1.EnvVar, names []string) []string {
	was, is := effective(before), effective(after)
	var out []string
	for _, n := range sortedUnique(names) {
		_, inA := was[n]
		_, inB := is[n]
		if !inA && !inB {
			out = append(out, n)
		}
	}
	return out
}

// Kept lists, sorted, the names Diff compared: names, or every variable
// either list holds.
func Kept(before, after []corev1.EnvVar, names []string) []string {
	if len(names) == 0 {
		return union(effective(before), effective(after))
	}
	return sortedUnique(names)
}

// changed says how b differs from a, or "" when it does not.
func changed(a, b corev1.EnvVar) string {
	switch {
	case a.ValueFrom == nil && b.ValueFrom == nil:
		if a.Value != b.Value {
			return "value changed"
		}
		return ""
	case equality.Semantic.DeepEqual(a.ValueFrom, b.ValueFrom) && a.Value == b.Value:
		return ""
	}
	from, to := source(a), source(b)
	if from == to { // a difference the short form does not show (optional, apiVersion)
		from, to = "valueFrom "+asJSON(a.ValueFrom), "valueFrom "+asJSON(b.ValueFrom)
	}
	return fmt.Sprintf("changed from %s to %s", from, to)
}

// source says where a variable's value comes from without the value:
// "a value", or its valueFrom, which names a key or a field, not content.
func source(e corev1.EnvVar) string {
	f := e.ValueFrom
	switch {
	case f == nil:
		return "a value"
	case f.FieldRef != nil:
		return "valueFrom fieldRef " + f.FieldRef.FieldPath
	case f.ResourceFieldRef != nil:
		r := f.ResourceFieldRef
		if r.ContainerName != "" {
			return fmt.Sprintf("valueFrom resourceFieldRef %s of container %s", r.Resource, r.ContainerName)
		}
		return "valueFrom resourceFieldRef " + r.Resource
	case f.ConfigMapKeyRef != nil:
		return fmt.Sprintf("valueFrom configMapKeyRef %s/%s", f.ConfigMapKeyRef.Name, f.ConfigMapKeyRef.Key)
	case f.SecretKeyRef != nil:
		return fmt.Sprintf("valueFrom secretKeyRef %s/%s", f.SecretKeyRef.Name, f.SecretKeyRef.Key)
	}
	return "valueFrom " + asJSON(f)
}

// asJSON shows a valueFrom whole: it holds references, never values.
func asJSON(f *corev1.EnvVarSource) string {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Sprintf("%+v", f)
	}
	return string(b)
}

// effective maps each name to the entry the container sees: the last.
func effective(env []corev1.EnvVar) map[string]corev1.EnvVar {
	m := make(map[string]corev1.EnvVar, len(env))
	for _, e := range env {
		m[e.Name] = e
	}
	return m
}

func union(a, b map[string]corev1.EnvVar) []string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func sortedUnique(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
