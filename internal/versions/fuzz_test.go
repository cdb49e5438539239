package versions

import (
	"fmt"
	"sort"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// FuzzPath checks Path against a brute-force search written apart from
// it: a path found is legal hop by hop and as short as any, and a refusal
// means no legal path exists.
func FuzzPath(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, uint8(0), uint8(9), uint8(30))
	f.Add([]byte{0, 16, 33, 50, 66, 80, 97, 130, 150, 200}, uint8(1), uint8(7), uint8(29))
	f.Fuzz(func(t *testing.T, data []byte, from, to, k8s uint8) {
		if len(data) == 0 || len(data) > 24 {
			return
		}
		// Each byte is a release: major 1..2, minor 0..5, patch 0..3,
		// and in its high bits a required stop, a Kubernetes floor and an
		// allowed skip from the minor before the one before.
		var cat []Release
		seen := map[string]bool{}
		for _, b := range data {
			ver := fmt.Sprintf("%d.%d.%d", 1+int(b>>7&1), int(b>>2&7)%6, int(b&3))
			if seen[ver] {
				continue
			}
			seen[ver] = true
			r := Release{Version: semver.MustParse(ver), RequiredStop: b%11 == 0}
			if b%7 == 0 {
				r.Kubernetes = c(">=1.30")
			}
			if b%5 == 0 && r.Version.Minor() >= 2 {
				r.AllowFrom = c(fmt.Sprintf(">=%d.%d.0 <%d.%d.0", r.Version.Major(), r.Version.Minor()-2, r.Version.Major(), r.Version.Minor()))
			}
			cat = append(cat, r)
		}
		sort.Slice(cat, func(i, j int) bool { return cat[i].Version.LessThan(cat[j].Version) })
		cur, tgt := cat[int(from)%len(cat)].Version, cat[int(to)%len(cat)].Version
		if !cur.LessThan(tgt) {
			return
		}
		req := Request{Current: cur, Target: tgt, Kubernetes: semver.MustParse(fmt.Sprintf("1.%d.0", 29+int(k8s)%3))}
		path, err := Path(cat, req)
		best := bruteForce(cat, req)
		if err != nil {
			if best >= 0 {
				t.Fatalf("Path refused (%v) but a path of %d hops exists in %v", err, best, versionsOf(cat))
			}
			return
		}
		if best < 0 || len(path) != best {
			t.Fatalf("Path found %d hops %v, brute force %d, in %v", len(path), versionsOf(path), best, versionsOf(cat))
		}
		at := cur
		for _, r := range path {
			if !legalHop(cat, req, at, r) {
				t.Fatalf("hop %s → %s breaks a rule (path %v, catalog %v)", at, r.Version, versionsOf(path), versionsOf(cat))
			}
			at = r.Version
		}
		if !at.Equal(tgt) {
			t.Fatalf("path %v ends at %s, not %s", versionsOf(path), at, tgt)
		}
	})
}

// bruteForce is the fewest legal hops from the current version to the
// target (breadth-first over every release), -1 when none.
func bruteForce(cat []Release, req Request) int {
	dist := map[string]int{req.Current.String(): 0}
	frontier := []*semver.Version{req.Current}
	for hops := 1; len(frontier) > 0; hops++ {
		var next []*semver.Version
		for _, at := range frontier {
			for _, r := range cat {
				if _, done := dist[r.Version.String()]; done || !legalHop(cat, req, at, r) {
					continue
				}
				if r.Version.Equal(req.Target) {
					return hops
				}
				dist[r.Version.String()] = hops
				next = append(next, r.Version)
			}
		}
		frontier = next
	}
	return -1
}

// legalHop states the package doc's rules for one hop directly.
func legalHop(cat []Release, req Request, at *semver.Version, to Release) bool {
	if !at.LessThan(to.Version) || req.Target.LessThan(to.Version) {
		return false
	}
	if to.Kubernetes != nil && !to.Kubernetes.Check(req.Kubernetes) {
		return false
	}
	for _, r := range cat {
		if r.RequiredStop && at.LessThan(r.Version) && r.Version.LessThan(to.Version) {
			return false
		}
	}
	if to.AllowFrom != nil && to.AllowFrom.Check(at) {
		return true
	}
	var minors []string
	for _, r := range cat {
		m := fmt.Sprintf("%d.%d", r.Version.Major(), r.Version.Minor())
		if len(minors) == 0 || minors[len(minors)-1] != m {
			minors = append(minors, m)
		}
	}
	mAt, mTo := fmt.Sprintf("%d.%d", at.Major(), at.Minor()), fmt.Sprintf("%d.%d", to.Version.Major(), to.Version.Minor())
	if mAt == mTo {
		return true
	}
	for i := range minors[:len(minors)-1] {
		if minors[i] == mAt {
			return minors[i+1] == mTo
		}
	}
	return false
}

func versionsOf(rs []Release) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Version.String()
		if r.RequiredStop {
			out[i] += "!"
		}
	}
	return out
}
