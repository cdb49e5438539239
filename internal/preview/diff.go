package preview

import (
	"fmt"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Diff is the unified diff from before to after, both normalized, as
// YAML; "" when they are equal. A nil before (the object does not exist)
// diffs against nothing, a nil after (it will be deleted) to nothing.
func Diff(before, after *unstructured.Unstructured) (string, error) {
	a, err := yamlOf(Normalize(before))
	if err != nil {
		return "", err
	}
	b, err := yamlOf(Normalize(after))
	if err != nil {
		return "", err
	}
	if a == b {
		return "", nil
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
