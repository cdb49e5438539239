package redact

import (
	"encoding/base64"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lastApplied is kubectl's copy of the applied object: on a Secret it holds
// the values too.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// secretFields hold a Secret's values: data base64-encoded, stringData as
// written.
var secretFields = []struct {
	name string
	b64  bool
}{{"data", true}, {"stringData", false}}

// Object returns a deep copy of u in which every value of a Secret's data
// and stringData (and kubectl's last-applied copy of it) is replaced by
// "<redacted N bytes>". Other kinds are copied as they are.
func Object(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	out := u.DeepCopy()
	if !isSecret(out) {
		return out
	}
	for _, f := range secretFields {
		m, ok := out.Object[f.name].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			m[k] = hidden(v, f.b64, "")
		}
	}
	if ann := annotations(out); ann != nil {
		if v, ok := ann[lastApplied]; ok {
			ann[lastApplied] = hidden(v, false, "")
		}
	}
	return out
}

// Pair redacts two versions of one object to be compared or diffed, as
// kubectl diff's masker does: compared before redacting, so a Secret value
// that changed shows as changed even when the new value has the old one's
// length ("<redacted 6 bytes (before)>" against "<redacted 6 bytes
// (after)>"), and an unchanged one as equal. Either may be nil (created,
// deleted). Written here rather than taken from k8s.io/kubectl's Masker,
// which covers data only (not stringData nor kubectl's last-applied copy)
// and comes with the whole diff command's dependencies.
func Pair(before, after *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	if before == nil || after == nil || (!isSecret(before) && !isSecret(after)) {
		return Object(before), Object(after)
	}
	b, a := before.DeepCopy(), after.DeepCopy()
	for _, f := range secretFields {
		bm, _ := b.Object[f.name].(map[string]any)
		am, _ := a.Object[f.name].(map[string]any)
		for k, bv := range bm {
			av, inA := am[k]
			switch {
			case !inA:
				bm[k] = hidden(bv, f.b64, "")
			case reflect.DeepEqual(av, bv):
				bm[k], am[k] = hidden(bv, f.b64, ""), hidden(av, f.b64, "")
			default:
				bm[k], am[k] = hidden(bv, f.b64, "before"), hidden(av, f.b64, "after")
			}
		}
		for k, av := range am {
			if _, inB := bm[k]; !inB {
				am[k] = hidden(av, f.b64, "")
			}
		}
	}
	bAnn, aAnn := annotations(b), annotations(a)
	bv, inB := bAnn[lastApplied]
	av, inA := aAnn[lastApplied]
	switch {
	case inB && inA && !reflect.DeepEqual(av, bv):
		bAnn[lastApplied], aAnn[lastApplied] = hidden(bv, false, "before"), hidden(av, false, "after")
	default:
		if inB {
			bAnn[lastApplied] = hidden(bv, false, "")
		}
		if inA {
			aAnn[lastApplied] = hidden(av, false, "")
		}
	}
	return b, a
}

func isSecret(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// annotations is u's annotations map itself (nil when there is none), so
// that writing to it changes u.
func annotations(u *unstructured.Unstructured) map[string]any {
	md, _ := u.Object["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	return ann
}

// hidden names only the size of a value (the decoded size for base64
// data), and which side of a change it is when side is set.
func hidden(v any, b64 bool, side string) string {
	s, ok := v.(string)
	if !ok {
		if side != "" {
			return "<redacted (" + side + ")>"
		}
		return "<redacted>"
	}
	n := len(s)
	if b64 {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			n = len(b)
		}
	}
	if side != "" {
		return fmt.Sprintf("<redacted %d bytes (%s)>", n, side)
	}
	return fmt.Sprintf("<redacted %d bytes>", n)
}
