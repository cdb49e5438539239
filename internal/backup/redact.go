package backup

import (
	"encoding/base64"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lastApplied is kubectl's copy of the applied object: on a Secret it holds
// the values too.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Redacted returns a deep copy of u in which every value of a Secret's
// data and stringData (and kubectl's last-applied copy of it) is replaced
// by "<redacted N bytes>". Other kinds are copied as they are.
func Redacted(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	out := u.DeepCopy()
	if !isSecret(out) {
		return out
	}
	for _, field := range []string{"data", "stringData"} {
		m, ok := out.Object[field].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			m[k] = redactedValue(v, field == "data")
		}
	}
	if md, ok := out.Object["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			if v, ok := ann[lastApplied]; ok {
				ann[lastApplied] = redactedValue(v, false)
			}
		}
	}
	return out
}

func isSecret(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// redactedValue names only the size of a value: the decoded size for
// base64 data.
func redactedValue(v any, b64 bool) string {
	s, ok := v.(string)
	if !ok {
		return "<redacted>"
	}
	n := len(s)
	if b64 {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			n = len(b)
		}
	}
	return fmt.Sprintf("<redacted %d bytes>", n)
}
