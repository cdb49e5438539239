package helmx

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chartutil"
)

// MergeValues merges values files, in order, then inline values over them,
// as `helm upgrade -f a.yaml -f b.yaml --set-json …` does: maps merge key
// by key, anything else is replaced. Each input is a YAML (or JSON) object;
// an empty one counts as {}.
func MergeValues(files [][]byte, inline []byte) (map[string]any, error) {
	out := map[string]any{}
	for i, f := range files {
		v, err := chartutil.ReadValues(f)
		if err != nil {
			return nil, fmt.Errorf("values file %d: %w", i+1, err)
		}
		out = mergeMaps(out, v)
	}
	if len(inline) > 0 {
		v, err := chartutil.ReadValues(inline)
		if err != nil {
			return nil, fmt.Errorf("inline values: %w", err)
		}
		out = mergeMaps(out, v)
	}
	return out, nil
}

// mergeMaps is Helm's own merge of -f files (pkg/cli/values keeps it
// unexported), so values merge exactly as the helm CLI merges them.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]any); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}
