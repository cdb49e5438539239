package runstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// storedStatus is a run's status as the resource keeps it, split the way
// a save diffs it: each top-level field's JSON but the stages, and each
// stage's JSON.
type storedStatus struct {
	fields map[string]json.RawMessage
	stages []json.RawMessage
}

func splitStatus(st *v1alpha1.RunStatus) (storedStatus, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return storedStatus{}, err
	}
	var out storedStatus
	if err := json.Unmarshal(b, &out.fields); err != nil {
		return storedStatus{}, err
	}
	if raw, ok := out.fields["stages"]; ok {
		delete(out.fields, "stages")
		if err := json.Unmarshal(raw, &out.stages); err != nil {
			return storedStatus{}, err
		}
	}
	return out, nil
}

// equal reports whether two splits hold the same status.
func (a storedStatus) equal(b storedStatus) bool {
	if len(a.fields) != len(b.fields) || len(a.stages) != len(b.stages) {
		return false
	}
	for k, v := range a.fields {
		if !bytes.Equal(v, b.fields[k]) {
			return false
		}
	}
	for i := range a.stages {
		if !bytes.Equal(a.stages[i], b.stages[i]) {
			return false
		}
	}
	return true
}

// whole is the status as one JSON object.
func (a storedStatus) whole() map[string]any {
	out := make(map[string]any, len(a.fields)+1)
	for k, v := range a.fields {
		out[k] = v
	}
	if a.stages != nil {
		out["stages"] = a.stages
	}
	return out
}

// op is one JSON patch (RFC 6902) operation.
type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// statusPatch is the JSON patch of the status subresource that turns the
// status stored at resourceVersion (last; nil when not known) into next:
// its first operation sets metadata.resourceVersion, so the API server
// refuses it with a conflict when the run changed since; then, when last
// is known, only the fields and the stages that differ (stages added at
// the end, removed from the end); otherwise the whole status.
func statusPatch(resourceVersion string, last *storedStatus, next storedStatus) ([]byte, error) {
	ops := []op{{Op: "replace", Path: "/metadata/resourceVersion", Value: resourceVersion}}
	if last == nil {
		ops = append(ops, op{Op: "add", Path: "/status", Value: next.whole()})
		return json.Marshal(ops)
	}
	keys := make([]string, 0, len(next.fields))
	for k := range next.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := next.fields[k]; !bytes.Equal(last.fields[k], v) {
			ops = append(ops, op{Op: "add", Path: "/status/" + k, Value: v}) // add replaces a member
		}
	}
	var gone []string
	for k := range last.fields {
		if _, ok := next.fields[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	for _, k := range gone {
		ops = append(ops, op{Op: "remove", Path: "/status/" + k})
	}
	switch {
	case last.stages == nil && next.stages != nil:
		ops = append(ops, op{Op: "add", Path: "/status/stages", Value: next.stages})
	case last.stages != nil && next.stages == nil:
		ops = append(ops, op{Op: "remove", Path: "/status/stages"})
	default:
		for i, v := range next.stages {
			switch {
			case i >= len(last.stages):
				ops = append(ops, op{Op: "add", Path: "/status/stages/-", Value: v})
			case !bytes.Equal(last.stages[i], v):
				ops = append(ops, op{Op: "replace", Path: fmt.Sprintf("/status/stages/%d", i), Value: v})
			}
		}
		for i := len(last.stages) - 1; i >= len(next.stages); i-- {
			ops = append(ops, op{Op: "remove", Path: fmt.Sprintf("/status/stages/%d", i)})
		}
	}
	return json.Marshal(ops)
}
