package versions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Release is one version of the platform as the catalog lists it.
type Release struct {
	Version *semver.Version
	// Kubernetes is the range of Kubernetes versions it runs on; nil: any.
	Kubernetes *semver.Constraints
	// Peers is the range of peer-cluster versions it works with; nil: any.
	Peers *semver.Constraints
	// AllowFrom are versions that may hop straight to this release, even
	// across minors; nil: only its own minor and the catalog's minor
	// before it.
	AllowFrom *semver.Constraints
	// RequiredStop: no hop may jump over this release.
	RequiredStop bool
}

// Peer is a peer cluster and the platform version it runs.
type Peer struct {
	Name    string
	Version *semver.Version
}

// Request is what to solve.
type Request struct {
	// Current is nil for an install: the path is the target alone.
	Current, Target *semver.Version
	Kubernetes      *semver.Version // the cluster's; nil: not checked
	Peers           []Peer
	AllowDowngrade  bool
}

// Rules a path can be refused by (NoPathError.Rule).
const (
	RuleUnknownTarget = "unknown-target"
	RuleDowngrade     = "no-downgrade"
	RuleKubernetes    = "kubernetes-range"
	RulePeers         = "peer-skew"
	RuleSkipMinor     = "no-minor-skip"
	RuleRequiredStop  = "required-stop"
)

// NoPathError says which rule leaves no path, and where.
type NoPathError struct {
	From, To *semver.Version
	Rule     string
	Detail   string
}

func (e *NoPathError) Error() string {
	if e.From == nil {
		return fmt.Sprintf("cannot install %s (%s): %s", e.To, e.Rule, e.Detail)
	}
	return fmt.Sprintf("no upgrade path from %s to %s (%s): %s", e.From, e.To, e.Rule, e.Detail)
}

// Path returns the releases to stop at, in order, ending with the target;
// empty when the current version is the target. The rules are in the
// package doc.
func Path(catalog []Release, req Request) ([]Release, error) {
	fail := func(rule, format string, args ...any) ([]Release, error) {
		return nil, &NoPathError{From: req.Current, To: req.Target, Rule: rule, Detail: fmt.Sprintf(format, args...)}
	}
	if req.Current != nil && req.Current.Equal(req.Target) {
		return nil, nil
	}
	target, ok := find(catalog, req.Target)
	if !ok {
		return fail(RuleUnknownTarget, "the catalog lists no release %s", req.Target)
	}
	if why := blocked(target, req); why != nil {
		return nil, why
	}
	if req.Current == nil {
		return []Release{target}, nil // an install
	}
	if req.Target.LessThan(req.Current) {
		if !req.AllowDowngrade {
			return fail(RuleDowngrade, "%s is older than the running %s: ask for a downgrade explicitly", req.Target, req.Current)
		}
		return []Release{target}, nil
	}
	nodes := candidates(catalog, req)
	minors := minorsOf(catalog)
	// hops[i] is the fewest hops from nodes[i] to the target (-1: none),
	// computed from the target down.
	hops := make([]int, len(nodes))
	last := len(nodes) - 1
	for i := last; i >= 0; i-- {
		hops[i] = -1
		if i == last {
			hops[i] = 0
			continue
		}
		for j := i + 1; j <= last; j++ {
			if hops[j] >= 0 && allowed(nodes, i, j, minors) && (hops[i] < 0 || hops[j]+1 < hops[i]) {
				hops[i] = hops[j] + 1
			}
		}
	}
	from := -1 // the current version, before nodes[0]
	var path []Release
	for from != last {
		next := -1
		for j := last; j > from; j-- { // highest first
			if hops[j] < 0 || !allowedFrom(nodes, from, j, req.Current, minors) {
				continue
			}
			if next < 0 || hops[j] < hops[next] {
				next = j
			}
		}
		if next < 0 {
			return nil, explain(nodes, from, req, minors)
		}
		path = append(path, nodes[next].Release)
		from = next
	}
	return path, nil
}

// node is a release a path may pass; ok: it may also stop there.
type node struct {
	Release
	ok bool
}

// candidates are the releases a path may pass: above the current
// version, up to the target, not pre-releases (but the target); sorted.
// Those Kubernetes or a peer rule out are left out, but a required stop
// stays (not ok), so no hop jumps it and the refusal names it.
func candidates(catalog []Release, req Request) []node {
	var out []node
	for _, r := range catalog {
		v := r.Version
		if !req.Current.LessThan(v) || req.Target.LessThan(v) {
			continue
		}
		if v.Prerelease() != "" && !v.Equal(req.Target) {
			continue
		}
		ok := blocked(r, req) == nil
		if !ok && !r.RequiredStop {
			continue
		}
		out = append(out, node{r, ok})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version.LessThan(out[j].Version) })
	return out
}

// allowedFrom is allowed for a hop from nodes[i], or from the current
// version when i is -1.
func allowedFrom(nodes []node, i, j int, current *semver.Version, minors []minor) bool {
	if i >= 0 {
		return allowed(nodes, i, j, minors)
	}
	return nodes[j].ok && hopAllowed(current, nodes[:j+1], minors)
}

// allowed tells whether a hop may go from nodes[i] to nodes[j] (i < j).
func allowed(nodes []node, i, j int, minors []minor) bool {
	return nodes[i].ok && nodes[j].ok && hopAllowed(nodes[i].Version, nodes[i+1:j+1], minors)
}

// hopAllowed tells whether a hop may go from v to the last of between
// (the releases above v up to the hop's end): no required stop jumped,
// and no minor skipped unless the end allows it.
func hopAllowed(v *semver.Version, between []node, minors []minor) bool {
	end := between[len(between)-1]
	for _, r := range between[:len(between)-1] {
		if r.RequiredStop {
			return false
		}
	}
	if end.AllowFrom != nil && end.AllowFrom.Check(v) {
		return true
	}
	return nextMinor(v, end.Version, minors)
}

// minor is one major.minor the catalog lists.
type minor struct{ major, minor uint64 }

func minorsOf(catalog []Release) []minor {
	seen := map[minor]bool{}
	var out []minor
	for _, r := range catalog {
		m := minor{r.Version.Major(), r.Version.Minor()}
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].major < out[j].major || out[i].major == out[j].major && out[i].minor < out[j].minor
	})
	return out
}

// nextMinor tells whether w is in v's minor or the next one the catalog
// lists.
func nextMinor(v, w *semver.Version, minors []minor) bool {
	mv, mw := minor{v.Major(), v.Minor()}, minor{w.Major(), w.Minor()}
	if mv == mw {
		return true
	}
	for i, m := range minors {
		if m == mv {
			return i+1 < len(minors) && minors[i+1] == mw
		}
		if after(m, mv) { // v's minor is not in the catalog: the first above it is next
			return m == mw
		}
	}
	return false
}

func after(a, b minor) bool { return a.major > b.major || a.major == b.major && a.minor > b.minor }

// blocked says why a release cannot be stopped at on this cluster, or nil.
func blocked(r Release, req Request) *NoPathError {
	fail := func(rule, format string, args ...any) *NoPathError {
		return &NoPathError{From: req.Current, To: req.Target, Rule: rule, Detail: fmt.Sprintf(format, args...)}
	}
	if r.Kubernetes != nil && req.Kubernetes != nil && !r.Kubernetes.Check(req.Kubernetes) {
		return fail(RuleKubernetes, "%s needs Kubernetes %s; the cluster runs %s", r.Version, r.Kubernetes, req.Kubernetes)
	}
	if r.Peers != nil {
		peers := append([]Peer(nil), req.Peers...)
		sort.Slice(peers, func(i, j int) bool { return peers[i].Version.LessThan(peers[j].Version) })
		for _, p := range peers {
			if !r.Peers.Check(p.Version) {
				return fail(RulePeers, "%s works with peers %s; peer %s runs %s", r.Version, r.Peers, p.Name, p.Version)
			}
		}
	}
	return nil
}

func find(catalog []Release, v *semver.Version) (Release, bool) {
	for _, r := range catalog {
		if r.Version.Equal(v) {
			return r, true
		}
	}
	return Release{}, false
}

// explain says why no hop leaves nodes[from] (the current version at -1):
// a required stop that cannot be stopped at, a minor that has no release
// the cluster can run, or a minor skipped.
func explain(nodes []node, from int, req Request, minors []minor) error {
	at := req.Current
	if from >= 0 {
		at = nodes[from].Version
	}
	for _, r := range nodes[from+1:] {
		if r.RequiredStop {
			if why := blocked(r.Release, req); why != nil {
				why.Detail = fmt.Sprintf("required stop %s cannot be stopped at: %s", r.Version, why.Detail)
				return why
			}
			break
		}
	}
	var next []string
	for _, m := range minors {
		if after(m, minor{at.Major(), at.Minor()}) {
			next = append(next, fmt.Sprintf("%d.%d", m.major, m.minor))
			break
		}
	}
	return &NoPathError{From: req.Current, To: req.Target, Rule: RuleSkipMinor,
		Detail: fmt.Sprintf("from %s the next minor (%s) has no release this cluster and its peers can run, and no later release allows coming from %s", at, strings.Join(next, ""), at)}
}
