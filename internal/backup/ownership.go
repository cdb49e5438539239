package backup

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// owner is one managedFields entry: who wrote, and through which
// subresource ("" for the object itself).
type owner struct {
	manager     string
	subresource string
}

// String names the owner as a difference shows it: "hpa (scale)".
func (o owner) String() string {
	if o.subresource == "" {
		return o.manager
	}
	return fmt.Sprintf("%s (%s)", o.manager, o.subresource)
}

// ownedFields is what one managedFields entry owns: its field set, and
// where each member of the set is in the object, in Compare's notation
// (spec.template.spec.containers[0].image).
type ownedFields struct {
	owner
	set *fieldpath.Set
	at  map[string][]fieldpath.Path
}

// ownership is who owns which field of one object; known is false when
// the object carries no managedFields.
type ownership struct {
	known   bool
	entries []ownedFields
}

// holding is an owner of a field, with the members of its set that make
// it one (the field, parts of it, or its nearest held ancestor).
type holding struct {
	owner
	paths []fieldpath.Path
}

// ownershipOf reads u's managedFields. The field sets are decoded with
// structured-merge-diff, the library the API server records them with;
// placing their members in the object (resolve) is done here, without a
// schema: list entries are found by their key or value in the object.
func ownershipOf(u *unstructured.Unstructured) (ownership, error) {
	mfs := u.GetManagedFields()
	o := ownership{known: len(mfs) > 0}
	for _, mf := range mfs {
		if mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			return ownership{}, fmt.Errorf("managedFields entry of %q: %w", mf.Manager, err)
		}
		of := ownedFields{owner: owner{mf.Manager, mf.Subresource}, set: set, at: map[string][]fieldpath.Path{}}
		set.Iterate(func(p fieldpath.Path) {
			if at, ok := resolve(u.Object, p); ok { // else an entry the object no longer holds
				of.at[at] = append(of.at[at], p.Copy())
			}
		})
		o.entries = append(o.entries, of)
	}
	return o, nil
}

// owners returns who owns the field at path (Compare's notation): the
// entries that hold it or something below it; when none does, those
// that hold its nearest ancestor. (A member of a field set says nothing
// of what is below it: an atomic selector and a map whose keys other
// managers own look alike without the schema. The nearest holder is the
// one that last wrote that part of the object.)
func (o ownership) owners(path string) []holding {
	var out []holding
	for _, e := range o.entries {
		var paths []fieldpath.Path
		for at, ps := range e.at {
			if at == path || isBelow(at, path) {
				paths = append(paths, ps...)
			}
		}
		if len(paths) > 0 {
			out = append(out, holding{e.owner, paths})
		}
	}
	if len(out) > 0 {
		return out
	}
	nearest := ""
	for _, e := range o.entries {
		for at := range e.at {
			if isBelow(path, at) && len(at) > len(nearest) {
				nearest = at
			}
		}
	}
	for _, e := range o.entries {
		if ps := e.at[nearest]; nearest != "" && len(ps) > 0 {
			out = append(out, holding{e.owner, ps})
		}
	}
	return out
}

// held tells whether h's manager held any of h's fields in this object
// (the snapshot): by the fields' own paths, so a list entry counts as the
// same wherever it moved in its list.
func (o ownership) held(h holding) bool {
	for _, e := range o.entries {
		if e.manager != h.manager {
			continue
		}
		for _, p := range h.paths {
			if e.set.Has(p) || e.holdsBelow(p) {
				return true
			}
		}
	}
	return false
}

func (e ownedFields) holdsBelow(p fieldpath.Path) bool {
	for m := range e.set.All() {
		if len(m) > len(p) && m[:len(p)].Equals(p) {
			return true
		}
	}
	return false
}

// isBelow tells whether path names a field inside the field at parent.
func isBelow(path, parent string) bool {
	return strings.HasPrefix(path, parent) && len(path) > len(parent) && (path[len(parent)] == '.' || path[len(parent)] == '[')
}

// resolve turns a managedFields path into Compare's notation for obj:
// a list entry named by key (k:{"name":"web"}) or value (v:"x") becomes
// its index in obj. False when obj holds no such entry.
func resolve(obj any, p fieldpath.Path) (string, bool) {
	path, cur := "", obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, _ := cur.(map[string]any)
			path, cur = fieldPath(path, *pe.FieldName), m[*pe.FieldName]
		case pe.Key != nil, pe.Value != nil, pe.Index != nil:
			l, _ := cur.([]any)
			i := entryIndex(l, pe)
			if i < 0 {
				return "", false
			}
			path, cur = fmt.Sprintf("%s[%d]", path, i), l[i]
		default:
			return "", false
		}
	}
	return path, true
}

// entryIndex finds the list entry pe names, or -1.
func entryIndex(l []any, pe fieldpath.PathElement) int {
	if pe.Index != nil {
		if *pe.Index < 0 || *pe.Index >= len(l) {
			return -1
		}
		return *pe.Index
	}
	for i, item := range l {
		if pe.Value != nil && value.Equals(value.NewValueInterface(item), *pe.Value) {
			return i
		}
		if pe.Key != nil && hasKey(item, *pe.Key) {
			return i
		}
	}
	return -1
}

// hasKey tells whether a list entry has every key field of an associative
// list's key, with the same values.
func hasKey(item any, key value.FieldList) bool {
	m, ok := item.(map[string]any)
	if !ok {
		return false
	}
	for _, f := range key {
		v, ok := m[f.Name]
		if !ok || !value.Equals(value.NewValueInterface(v), f.Value) {
			return false
		}
	}
	return true
}
