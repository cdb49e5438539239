package install_test

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/install"
)

// repoRoot is two directories up.
const repoRoot = "../.."

var (
	chartDir   = filepath.Join(repoRoot, "charts", "upshift")
	defaultDir = filepath.Join(repoRoot, "config", "default")
)

const (
	// The release name and namespace under which the chart's objects are
	// named as config/default names them.
	release   = "upshift"
	namespace = "upshift-system"
)

func renderChart(t *testing.T, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := install.RenderChart(chartDir, release, namespace, values)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func buildKustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := install.BuildKustomize(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// values builds a values map from dotted keys: values("a.b", 1) is {a: {b: 1}}.
func values(kv ...any) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		_ = unstructured.SetNestedField(out, kv[i+1], splitDots(kv[i].(string))...)
	}
	return out
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
