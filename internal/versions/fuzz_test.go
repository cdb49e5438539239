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
		// and in its high bits a required stop, a Kubernetes floor, an
		// allowed skip from the minor before the one before and a
		// Kubernetes it installs (1.28..1.32, around the cluster's).
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
			if b%3 == 0 {
				r.InstallsKubernetes = semver.MustParse(fmt.Sprintf("1.%d.0", 28+int(b/3)%5))
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
		at, kube := cur, req.Kubernetes
		for _, r := range path {
			next, ok := legalHop(cat, req, at, kube, r)
			if !ok {
				t.Fatalf("hop %s → %s (Kubernetes %s) breaks a rule (path %v, catalog %v)", at, r.Version, kube, versionsOf(path), versionsOf(cat))
			}
			at, kube = r.Version, next
		}
		if !at.Equal(tgt) {
			t.Fatalf("path %v ends at %s, not %s", versionsOf(path), at, tgt)
		}
	})
}

// bruteForce is the fewest legal hops from the current version to the
// target (breadth-first over every release and the Kubernetes the cluster
// runs there), -1 when none.
func bruteForce(cat []Release, req Request) int {
	type state struct {
		at   *semver.Version
		kube *semver.Version
	}
	key := func(s state) string { return s.at.String() + "@" + s.kube.String() }
	start := state{req.Current, req.Kubernetes}
	seen := map[string]bool{key(start): true}
	frontier := []state{start}
	for hops := 1; len(frontier) > 0; hops++ {
		var next []state
		for _, s := range frontier {
			for _, r := range cat {
				kube, ok := legalHop(cat, req, s.at, s.kube, r)
				if !ok {
					continue
				}
				if r.Version.Equal(req.Target) {
					return hops
				}
				n := state{r.Version, kube}
				if !seen[key(n)] {
					seen[key(n)] = true
					next = append(next, n)
				}
			}
		}
		frontier = next
	}
	return -1
}

// legalHop states the package doc's rules for one hop directly, from at
// where the cluster runs Kubernetes kube; it returns the Kubernetes the
// cluster runs after the hop.
func legalHop(cat []Release, req Request, at, kube *semver.Version, to Release) (*semver.Version, bool) {
	if !at.LessThan(to.Version) || req.Target.LessThan(to.Version) {
		return nil, false
	}
	after := kube
	if to.InstallsKubernetes != nil {
		after = to.InstallsKubernetes
		up := int(after.Minor()) - int(kube.Minor())
		if up > 1 || up < 0 && !req.AllowDowngrade || up < -1 {
			return nil, false
		}
	}
	if to.Kubernetes != nil && !to.Kubernetes.Check(after) {
		return nil, false
	}
	for _, r := range cat {
		if r.RequiredStop && at.LessThan(r.Version) && r.Version.LessThan(to.Version) {
			return nil, false
		}
	}
	if to.AllowFrom != nil && to.AllowFrom.Check(at) {
		return after, true
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
		return after, true
	}
	for i := range minors[:len(minors)-1] {
		if minors[i] == mAt {
			return after, minors[i+1] == mTo
		}
	}
	return nil, false
}

func versionsOf(rs []Release) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Version.String()
		if r.RequiredStop {
			out[i] += "!"
		}
		if r.InstallsKubernetes != nil {
			out[i] += fmt.Sprintf("(k%d.%d)", r.InstallsKubernetes.Major(), r.InstallsKubernetes.Minor())
		}
	}
	return out
}
