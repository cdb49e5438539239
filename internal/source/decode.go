package source

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ErrInvalidDocument: a document is not a Kubernetes object.
var ErrInvalidDocument = errors.New("invalid document")

// Decode splits a YAML or JSON multi-document stream into objects, in
// order. Empty documents (only comments or whitespace) are skipped; items
// of a `kind: List` are flattened into the result. A document that is not
// an object, or lacks apiVersion, kind or metadata.name, is an error naming
// its index in the stream (1-based, counting empty documents too) and what
// is missing.
func Decode(b []byte) ([]*unstructured.Unstructured, error) { return decode(b, false) }

// DecodeSecret is Decode for content read from a Secret: the YAML or JSON
// parser's own message, which may quote the text it could not read, is
// left out of its errors.
func DecodeSecret(b []byte) ([]*unstructured.Unstructured, error) { return decode(b, true) }

// withheld stands for a parser's message about a Secret's content.
const withheld = "not YAML or JSON (the parser's message is not shown: it may quote the Secret)"

func decode(b []byte, quiet bool) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	index := 0
	for {
		chunk, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil && quiet {
			return nil, fmt.Errorf("document %d: %w: %s", index+1, ErrInvalidDocument, withheld)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", index+1, err)
		}
		// A chunk is one YAML document, or JSON objects one after
		// another: the YAML-or-JSON decoder reads either.
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(chunk), 4096)
		for first := true; ; first = false {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if errors.Is(err, io.EOF) {
				if first {
					index++ // an empty document still counts
				}
				break
			}
			index++
			if err != nil && quiet {
				return nil, fmt.Errorf("document %d: %w: %s", index, ErrInvalidDocument, withheld)
			}
			if err != nil {
				return nil, fmt.Errorf("document %d: %w: %w", index, ErrInvalidDocument, err)
			}
			objs, err := toObjects(raw, fmt.Sprintf("document %d", index))
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
}

// toObjects checks one decoded document; a List yields its items.
func toObjects(raw json.RawMessage, where string) ([]*unstructured.Unstructured, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, nil // empty document
	}
	var m map[string]any
	if err := utiljson.Unmarshal(trimmed, &m); err != nil {
		return nil, fmt.Errorf("%s: %w: not an object", where, ErrInvalidDocument)
	}
	return objectsOf(m, where)
}

func objectsOf(m map[string]any, where string) ([]*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "List" {
		items, ok := m["items"].([]any)
		if !ok && m["items"] != nil {
			return nil, fmt.Errorf("%s: %w: List items is not a list", where, ErrInvalidDocument)
		}
		var out []*unstructured.Unstructured
		for i, it := range items {
			im, ok := it.(map[string]any)
			itemWhere := fmt.Sprintf("%s item %d", where, i+1)
			if !ok {
				return nil, fmt.Errorf("%s: %w: not an object", itemWhere, ErrInvalidDocument)
			}
			objs, err := objectsOf(im, itemWhere)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	if missing := missingFields(u); len(missing) > 0 {
		return nil, fmt.Errorf("%s: %w: missing %s", where, ErrInvalidDocument, strings.Join(missing, ", "))
	}
	return []*unstructured.Unstructured{u}, nil
}

// missingFields lists what every applied object needs and u lacks.
func missingFields(u *unstructured.Unstructured) []string {
	var missing []string
	if s, _ := u.Object["apiVersion"].(string); s == "" {
		missing = append(missing, "apiVersion")
	}
	if s, _ := u.Object["kind"].(string); s == "" {
		missing = append(missing, "kind")
	}
	meta, _ := u.Object["metadata"].(map[string]any)
	if s, _ := meta["name"].(string); s == "" {
		missing = append(missing, "metadata.name")
	}
	return missing
}
