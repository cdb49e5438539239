package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// FuzzDetect feeds the version detector what it reads from a cluster:
// ConfigMap values, labels, Helm chart and app versions and
// Installations (Finding values), and container images (ImageTag).
// Agree gives a version only when every source found the same one, and
// that version is what each value parses to; otherwise a *DetectError
// that names each source. ImageTag gives the reference's tag, never a
// piece of its registry, path or digest.
func FuzzDetect(f *testing.F) {
	f.Add("v1.1.0", "1.1.0", "ghcr.io/liqotech/liqo:v1.1.0", false)
	f.Add("2.17.0+k8s-1.33", "v2.17.0+k8s-1.33", "registry:5000/x:v1@sha256:abc", true)
	f.Add("1.0", "", "registry:5000/x", false)
	f.Fuzz(func(t *testing.T, a, b, image string, missingOptional bool) {
		findings := []Finding{{Source: "configMap a", Value: a}, {Source: "label b", Value: b, Missing: b == ""},
			{Source: "helm c", Missing: missingOptional, Optional: true, Value: a}}
		v, err := Agree(findings)
		va, errA := semver.NewVersion(a)
		vb, errB := semver.NewVersion(b)
		agree := errA == nil && errB == nil && va.Equal(vb)
		switch {
		case err == nil && !agree:
			t.Fatalf("Agree(%q, %q) gave %s though they do not agree", a, b, v)
		case err == nil && !v.Equal(va):
			t.Fatalf("Agree(%q, %q) gave %s, not %s", a, b, v, va)
		case err != nil && agree:
			t.Fatalf("Agree(%q, %q) refused though both are %s: %v", a, b, va, err)
		case err != nil:
			var de *DetectError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "configMap a") {
				t.Fatalf("a refusal that does not name its sources: %v", err)
			}
		}
		tag, ok := ImageTag(image)
		if !ok {
			return
		}
		ref, _, _ := strings.Cut(image, "@")
		if tag == "" || strings.ContainsAny(tag, "/@") || !strings.HasSuffix(ref, ":"+tag) {
			t.Fatalf("ImageTag(%q) = %q", image, tag)
		}
	})
}
