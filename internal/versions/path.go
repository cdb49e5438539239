package versions

import (
	"fmt"
	"sort"

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
	// InstallsKubernetes is the Kubernetes version the release installs
	// (a distribution that bundles Kubernetes: an embedded cluster, k0s);
	// nil: it leaves Kubernetes as it is. "1.32" reads as 1.32.0.
	InstallsKubernetes *semver.Version
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
	RuleKubeSkip      = "kubernetes-skip"
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
	if why := peersBlock(target, req); why != nil {
		return nil, why
	}
	oneHop := req.Current == nil || req.Target.LessThan(req.Current)
	var nodes []node
	if !oneHop {
		nodes = candidates(catalog, req)
	}
	// The target's Kubernetes checks hold on every path when no stop
	// before it installs Kubernetes: said first, as the clearest reason.
	if before, known := kubeBefore(nodes, len(nodes)-1, req); oneHop || known {
		if why := kubeBlock(target, before, req); why != nil {
			return nil, why
		}
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
	s := newSearch(nodes, minorsOf(catalog), req)
	if path := s.solve(); path != nil {
		return path, nil
	}
	return nil, s.explain()
}

// search finds the path through nodes. A state is a node and the
// Kubernetes version the cluster runs there: a release that installs
// Kubernetes changes what the stops after it are checked against.
type search struct {
	req    Request
	nodes  []node
	minors []minor
	// kube are the Kubernetes versions a state may hold: kube[0] is the
	// cluster's (nil: unknown), then each version a node installs.
	kube []*semver.Version
	// installs[j] indexes kube with what nodes[j] installs; -1: nothing.
	installs []int
	// skip and ranges keep the kubernetes-skip and kubernetes-range
	// rules; off only to explain a refusal.
	skip, ranges bool
}

func newSearch(nodes []node, minors []minor, req Request) *search {
	s := &search{req: req, nodes: nodes, minors: minors, kube: []*semver.Version{req.Kubernetes}, installs: make([]int, len(nodes)), skip: true, ranges: true}
	for j, n := range nodes {
		s.installs[j] = -1
		if n.InstallsKubernetes == nil {
			continue
		}
		for k, v := range s.kube[1:] {
			if v.Equal(n.InstallsKubernetes) {
				s.installs[j] = k + 1
			}
		}
		if s.installs[j] < 0 {
			s.installs[j] = len(s.kube)
			s.kube = append(s.kube, n.InstallsKubernetes)
		}
	}
	return s
}

// solve returns the path, nil when there is none.
func (s *search) solve() []Release {
	last, nk := len(s.nodes)-1, len(s.kube)
	// hops[i*nk+k] is the fewest hops from nodes[i] with Kubernetes
	// kube[k] to the target (-1: none), computed from the target down.
	hops := make([]int, len(s.nodes)*nk)
	for i := last; i >= 0; i-- {
		for k := range nk {
			h := &hops[i*nk+k]
			*h = -1
			if i == last {
				*h = 0
				continue
			}
			for j := i + 1; j <= last; j++ {
				next := hops[j*nk+s.kubeAfter(k, j)]
				if next >= 0 && (*h < 0 || next+1 < *h) && s.allowed(i, k, j) {
					*h = next + 1
				}
			}
		}
	}
	from, k := -1, 0 // the current version, before nodes[0]
	var path []Release
	for from != last {
		next, nextK := -1, 0
		for j := last; j > from; j-- { // highest first
			kj := s.kubeAfter(k, j)
			h := hops[j*nk+kj]
			if h < 0 || next >= 0 && h >= hops[next*nk+nextK] || !s.allowed(from, k, j) {
				continue
			}
			next, nextK = j, kj
		}
		if next < 0 {
			return nil
		}
		path = append(path, s.nodes[next].Release)
		from, k = next, nextK
	}
	return path
}

// kubeAfter is the Kubernetes a cluster runs at nodes[j] when it ran
// kube[k] before.
func (s *search) kubeAfter(k, j int) int {
	if s.installs[j] >= 0 {
		return s.installs[j]
	}
	return k
}

// allowed tells whether a hop may go from nodes[i] (the current version
// at -1), where the cluster runs kube[k], to nodes[j] (i < j).
func (s *search) allowed(i, k, j int) bool {
	to := s.nodes[j]
	if !to.ok {
		return false
	}
	from, between := s.req.Current, s.nodes[:j+1]
	if i >= 0 {
		from, between = s.nodes[i].Version, s.nodes[i+1:j+1]
	}
	if !hopAllowed(from, between, s.minors) {
		return false
	}
	if after := s.kube[s.kubeAfter(k, j)]; s.ranges && !kubeInRange(to.Release, after) {
		return false
	}
	return !s.skip || kubeSkip(to.Release, s.kube[k], s.req) == ""
}

// node is a release a path may pass; ok: its peers allow stopping there.
type node struct {
	Release
	ok bool
}

// candidates are the releases a path may pass: above the current
// version, up to the target, not pre-releases (but the target); sorted.
// Those a peer rules out are left out, but a required stop stays (not
// ok), so no hop jumps it and the refusal names it. Kubernetes is checked
// per hop: what it runs at a stop depends on the stops before.
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
		ok := peersBlock(r, req) == nil
		if !ok && !r.RequiredStop {
			continue
		}
		out = append(out, node{r, ok})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version.LessThan(out[j].Version) })
	return out
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

// peersBlock says why no peer lets a release be stopped at, or nil.
func peersBlock(r Release, req Request) *NoPathError {
	if r.Peers == nil {
		return nil
	}
	peers := append([]Peer(nil), req.Peers...)
	sort.Slice(peers, func(i, j int) bool { return peers[i].Version.LessThan(peers[j].Version) })
	for _, p := range peers {
		if !r.Peers.Check(p.Version) {
			return &NoPathError{From: req.Current, To: req.Target, Rule: RulePeers,
				Detail: fmt.Sprintf("%s works with peers %s; peer %s runs %s", r.Version, r.Peers, p.Name, p.Version)}
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
