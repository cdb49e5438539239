package versions

import (
	"fmt"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// benchCatalog is a long-lived platform's catalog: majors × minors ×
// patches releases, every fifth minor's .0 a required stop, every
// minor's first patch allowed from two minors back.
func benchCatalog(majors, minors, patches int) []Release {
	var out []Release
	for ma := 1; ma <= majors; ma++ {
		for mi := 0; mi < minors; mi++ {
			for pa := 0; pa < patches; pa++ {
				r := Release{Version: semver.MustParse(fmt.Sprintf("%d.%d.%d", ma, mi, pa))}
				if mi%5 == 0 && pa == 0 && mi > 0 {
					r.RequiredStop = true
				}
				if pa == 0 && mi >= 2 {
					r.AllowFrom = c(fmt.Sprintf(">= %d.%d.0, < %d.%d.0", ma, mi-2, ma, mi))
				}
				r.Kubernetes = c(">= 1.28")
				out = append(out, r)
			}
		}
	}
	return out
}

// BenchmarkPath solves the longest upgrade of a 3×20×5 (300 release)
// catalog; BenchmarkPathBruteForce is the fuzz test's breadth-first
// search over every release, the baseline.
func BenchmarkPath(b *testing.B) {
	cat := benchCatalog(3, 20, 5)
	req := Request{Current: semver.MustParse("1.0.0"), Target: semver.MustParse("3.19.4"), Kubernetes: semver.MustParse("1.34.0")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Path(cat, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPathBruteForce(b *testing.B) {
	cat := benchCatalog(3, 20, 5)
	req := Request{Current: semver.MustParse("1.0.0"), Target: semver.MustParse("3.19.4"), Kubernetes: semver.MustParse("1.34.0")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if bruteForce(cat, req) < 0 {
			b.Fatal("no path")
		}
	}
}
