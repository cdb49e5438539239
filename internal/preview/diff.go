package preview

import (
	"fmt"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/redact"
)

// Diff is the unified diff from before to after, both normalized, as
// YAML; "" when they are equal. A nil before (the object does not exist)
// diffs against nothing, a nil after (it will be deleted) to nothing.
//
// The two are compared before Secret values are redacted, and redacted as
// a pair (redact.Pair): a value changed to another of the same length is
// a change, shown as "<redacted N bytes (before)>" against "<redacted N
// bytes (after)>", never as the values.
func Diff(before, after *unstructured.Unstructured) (string, error) {
	nb, na := Normalize(before), Normalize(after)
	rawA, err := yamlOf(nb)
	if err != nil {
		return "", err
	}
	rawB, err := yamlOf(na)
	if err != nil {
		return "", err
	}
	if rawA == rawB {
		return "", nil
	}
	sb, sa := redact.Pair(nb, na)
	a, err := yamlOf(sb)
	if err != nil {
		return "", err
	}
	b, err := yamlOf(sa)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a), B: difflib.SplitLines(b),
		FromFile: "live", ToFile: "planned", Context: 3,
	})
}

func yamlOf(u *unstructured.Unstructured) (string, error) {
	if u == nil {
		return "", nil
	}
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return "", fmt.Errorf("encode %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return string(b), nil
}
