package runstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// storedStatus is a run's status as the resource keeps it: its JSON, and
// the same decoded, for diffing.
type storedStatus struct {
	raw []byte
	doc map[string]any
}

func splitStatus(st *v1alpha1.RunStatus) (storedStatus, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return storedStatus{}, err
	}
	out := storedStatus{raw: b}
	if err := json.Unmarshal(b, &out.doc); err != nil {
		return storedStatus{}, err
	}
	return out, nil
}

// equal reports whether two statuses are the same.
func (a storedStatus) equal(b storedStatus) bool { return bytes.Equal(a.raw, b.raw) }

// op is one JSON patch (RFC 6902) operation.
type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// statusPatch is the JSON patch of the status subresource that turns the
// status stored at resourceVersion (last; nil when not known) into next.
// Its first operation sets metadata.resourceVersion, so the API server
// refuses it with a conflict when the run changed since. Then, when last
// is known, only what differs: down to the field of a step that changed
// (a list grown at its end gets its new items added, one shrunk loses
// its last ones), unless replacing a whole object or list is shorter
// than its changes; otherwise the whole status.
func statusPatch(resourceVersion string, last *storedStatus, next storedStatus) ([]byte, error) {
	ops := []op{{Op: "replace", Path: "/metadata/resourceVersion", Value: resourceVersion}}
	if last == nil {
		ops = append(ops, op{Op: "add", Path: "/status", Value: json.RawMessage(next.raw)})
	} else {
		ops = append(ops, diff("/status", last.doc, next.doc)...)
	}
	return json.Marshal(ops)
}

// diff is the operations that turn old into next at path, where old
// exists; nil when they are equal.
func diff(path string, old, next any) []op {
	if reflect.DeepEqual(old, next) {
		return nil
	}
	var ops []op
	switch o := old.(type) {
	case map[string]any:
		n, ok := next.(map[string]any)
		if !ok {
			break
		}
		for _, k := range sortedKeys(n) {
			child := path + "/" + escape(k)
			if ov, had := o[k]; had {
				ops = append(ops, diff(child, ov, n[k])...)
			} else {
				ops = append(ops, op{Op: "add", Path: child, Value: n[k]})
			}
		}
		for _, k := range sortedKeys(o) {
			if _, kept := n[k]; !kept {
				ops = append(ops, op{Op: "remove", Path: path + "/" + escape(k)})
			}
		}
	case []any:
		n, ok := next.([]any)
		if !ok {
			break
		}
		for i, v := range n {
			if i < len(o) {
				ops = append(ops, diff(fmt.Sprintf("%s/%d", path, i), o[i], v)...)
			} else {
				ops = append(ops, op{Op: "add", Path: path + "/-", Value: v})
			}
		}
		for i := len(o) - 1; i >= len(n); i-- {
			ops = append(ops, op{Op: "remove", Path: fmt.Sprintf("%s/%d", path, i)})
		}
	}
	whole := op{Op: "replace", Path: path, Value: next}
	if ops == nil || size(ops) >= size([]op{whole}) {
		return []op{whole}
	}
	return ops
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// escape makes k a JSON pointer token (RFC 6901).
func escape(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

func size(ops []op) int {
	b, _ := json.Marshal(ops) // decoded JSON encodes again
	return len(b)
}
