package plan

import (
	"errors"
	"fmt"
	"strings"

	yamlv3 "gopkg.in/yaml.v3"
	"sigs.k8s.io/yaml"
)

// ErrVersionNotString is a spec.version written as a YAML number or
// boolean: the Err of the DecodeError Load returns for it.
var ErrVersionNotString = errors.New("spec.version is not a YAML string")

// versionProblem reports spec.version when the YAML holds it as a number or
// a boolean. Unquoted, 1.10 is the number 1.1, and decoding it into a
// string field silently gives "1.1": another version. What a value is
// comes from the decoder Load uses (it reads YAML 1.1, where yes is a
// boolean too); the text as written comes from yaml.v3 nodes, since the
// decoded number has lost it. A list or a mapping is not reported here:
// strict decoding already fails on it.
func versionProblem(b []byte) string {
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return "" // broken YAML: strict decoding says where
	}
	spec, _ := lookupFold(doc, "spec").(map[string]any)
	v := lookupFold(spec, "version")
	var what string
	switch v.(type) {
	case bool:
		what = "a YAML boolean"
	case float64, int64, int:
		what = "a YAML number"
	default:
		return ""
	}
	text, ok := scalarText(b, "spec", "version")
	if !ok {
		text = fmt.Sprint(v)
	}
	return fmt.Sprintf("spec.version: %s is %s: quote it (%q) so it stays a version", text, what, text)
}

// lookupFold finds key in m as encoding/json matches a field: exactly,
// else ignoring case.
func lookupFold(m map[string]any, key string) any {
	if v, ok := m[key]; ok {
		return v
	}
	for _, k := range sortedKeys(m) {
		if strings.EqualFold(k, key) {
			return m[k]
		}
	}
	return nil
}

// scalarText is the text of the scalar at the path of mapping keys, as it
// is written in the file.
func scalarText(b []byte, keys ...string) (string, bool) {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(b, &doc); err != nil || len(doc.Content) == 0 {
		return "", false
	}
	n := doc.Content[0]
	for _, k := range keys {
		if n = valueFold(deref(n), k); n == nil {
			return "", false
		}
	}
	n = deref(n)
	if n.Kind != yamlv3.ScalarNode {
		return "", false
	}
	return n.Value, true
}

// valueFold is the value under key in a mapping node, matched as
// lookupFold matches.
func valueFold(m *yamlv3.Node, key string) *yamlv3.Node {
	if m.Kind != yamlv3.MappingNode {
		return nil
	}
	var folded *yamlv3.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch k := m.Content[i].Value; {
		case k == key:
			return m.Content[i+1]
		case folded == nil && strings.EqualFold(k, key):
			folded = m.Content[i+1]
		}
	}
	return folded
}

// deref follows an alias (version: *v) to the node it names.
func deref(n *yamlv3.Node) *yamlv3.Node {
	for n.Kind == yamlv3.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}
