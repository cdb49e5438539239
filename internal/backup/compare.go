package backup

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/redact"
)

// ignoredMetadata are the fields the API server sets on every write.
var ignoredMetadata = []string{"resourceVersion", "uid", "generation", "creationTimestamp", "managedFields"}

// ignoredAnnotations are maintained by controllers, by kind ("" for all).
var ignoredAnnotations = map[string][]string{
	"":               {"deployment.kubernetes.io/revision"},
	"apps/DaemonSet": {"deprecated.daemonset.template.generation"},
}

// maxShown bounds how much of a value a difference prints.
const maxShown = 120

// Compare returns the differences between an object's snapshot and the
// live object, as "<field path> was <snapshot value> is <live value>",
// sorted by path. It ignores what the API server and controllers maintain:
// status, metadata.resourceVersion, uid, generation, creationTimestamp,
// managedFields, the deployment.kubernetes.io/revision annotation and a
// DaemonSet's deprecated.daemonset.template.generation. An empty map equals
// a missing one. A Secret's values are compared but shown redacted.
func Compare(snapshot, live *unstructured.Unstructured) []string {
	switch {
	case snapshot == nil && live == nil:
		return nil
	case snapshot == nil:
		return []string{"object was <absent> is present"}
	case live == nil:
		return []string{"object was present is <absent>"}
	}
	a, b := comparable(snapshot), comparable(live)
	shownA, shownB := a, b
	if isSecret(snapshot) || isSecret(live) {
		shownA, shownB = redact.Object(a), redact.Object(b)
	}
	var out []string
	walk("", a.Object, b.Object, shownA.Object, shownB.Object, &out)
	return out
}

// comparable is a copy of u without the ignored fields.
func comparable(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	delete(c.Object, "status")
	for _, f := range ignoredMetadata {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	gvk := u.GroupVersionKind()
	kind := gvk.Kind
	if gvk.Group != "" {
		kind = gvk.Group + "/" + gvk.Kind
	}
	md, _ := c.Object["metadata"].(map[string]any)
	if ann, ok := md["annotations"].(map[string]any); ok {
		for _, k := range slices.Concat(ignoredAnnotations[""], ignoredAnnotations[kind]) {
			delete(ann, k)
		}
	}
	return c
}

// walk compares a and b at path; shownA and shownB are the same trees as
// they may be printed (redacted for Secrets).
func walk(path string, a, b, shownA, shownB any, out *[]string) {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, inA := am[k]
			bv, inB := bm[k]
			p := fieldPath(path, k)
			sa, sb := field(shownA, k), field(shownB, k)
			// A map on one side only is walked against an empty one, so
			// each key it holds is named (and an empty map equals none).
			if _, isMap := bv.(map[string]any); !inA && isMap {
				av, inA = map[string]any{}, true
			}
			if _, isMap := av.(map[string]any); !inB && isMap {
				bv, inB = map[string]any{}, true
			}
			switch {
			case !inA:
				*out = append(*out, fmt.Sprintf("%s was <absent> is %s", p, show(sb)))
			case !inB:
				*out = append(*out, fmt.Sprintf("%s was %s is <absent>", p, show(sa)))
			default:
				walk(p, av, bv, sa, sb, out)
			}
		}
		return
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList {
		for i := 0; i < max(len(al), len(bl)); i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			sa, sb := item(shownA, i), item(shownB, i)
			switch {
			case i >= len(al):
				*out = append(*out, fmt.Sprintf("%s was <absent> is %s", p, show(sb)))
			case i >= len(bl):
				*out = append(*out, fmt.Sprintf("%s was %s is <absent>", p, show(sa)))
			default:
				walk(p, al[i], bl[i], sa, sb, out)
			}
		}
		return
	}
	if !sameValue(a, b) {
		*out = append(*out, fmt.Sprintf("%s was %s is %s", path, show(shownA), show(shownB)))
	}
}

func isSecret(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

func field(v any, k string) any {
	m, _ := v.(map[string]any)
	return m[k]
}

func item(v any, i int) any {
	l, _ := v.([]any)
	if i < len(l) {
		return l[i]
	}
	return nil
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// fieldPath appends a key: spec.replicas, metadata.labels["app.kubernetes.io/name"].
func fieldPath(path, k string) string {
	if !plainKey.MatchString(k) {
		return fmt.Sprintf("%s[%q]", path, k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// sameValue compares leaves; numbers compare by value, since JSON decoding
// gives int64 or float64 depending on the path taken.
func sameValue(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// show renders a value as JSON, cut to maxShown characters.
func show(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "<redacted 8 bytes>" readable
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	s := strings.TrimSuffix(b.String(), "\n")
	if len(s) > maxShown {
		s = s[:maxShown] + "…"
	}
	return s
}
