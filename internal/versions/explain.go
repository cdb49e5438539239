package versions

import (
	"fmt"
	"strings"
)

// explain says why the search found no hop out of the current version:
// a required stop that cannot be stopped at; a Kubernetes move the
// kubernetes-skip rule forbids, or a Kubernetes range, on every path
// otherwise legal; or a minor that has no release the cluster can run.
func (s *search) explain() error {
	req := s.req
	for j, r := range s.nodes {
		if !r.RequiredStop {
			continue
		}
		why := peersBlock(r.Release, req)
		if before, known := kubeBefore(s.nodes, j, req); why == nil && known {
			why = kubeBlock(r.Release, before, req)
		}
		if why != nil {
			why.Detail = fmt.Sprintf("required stop %s cannot be stopped at: %s", r.Version, why.Detail)
			return why
		}
		break
	}
	relaxed := *s
	relaxed.skip = false
	if path := relaxed.solve(); path != nil {
		return s.broken(path, RuleKubeSkip)
	}
	// A first hop exists, but the Kubernetes its stops leave the cluster
	// at is out of a later stop's range: that stop is named.
	relaxed.ranges = false
	if path := relaxed.solve(); path != nil && s.firstHop() {
		return s.broken(path, RuleKubernetes)
	}
	at := req.Current
	var next []string
	for _, m := range s.minors {
		if after(m, minor{at.Major(), at.Minor()}) {
			next = append(next, fmt.Sprintf("%d.%d", m.major, m.minor))
			break
		}
	}
	return &NoPathError{From: req.Current, To: req.Target, Rule: RuleSkipMinor,
		Detail: fmt.Sprintf("from %s the next minor (%s) has no release this cluster and its peers can run, and no later release allows coming from %s", at, strings.Join(next, ""), at)}
}

// firstHop tells whether any hop leaves the current version.
func (s *search) firstHop() bool {
	for j := range s.nodes {
		if s.allowed(-1, 0, j) {
			return true
		}
	}
	return false
}

// broken names the first stop of path, found without rule, that breaks
// it, with the Kubernetes the cluster runs as the hop to it starts.
func (s *search) broken(path []Release, rule string) error {
	k, by := s.req.Kubernetes, ""
	for _, r := range path {
		var why string
		switch at := kubeAt(r, k); {
		case rule == RuleKubeSkip:
			if skip := kubeSkip(r, k, s.req); skip != "" {
				why = fmt.Sprintf("%s; the cluster runs %s%s: %s", installs(r), k, by, skip)
			}
		case !kubeInRange(r, at) && r.InstallsKubernetes != nil:
			why = fmt.Sprintf("%s needs Kubernetes %s but installs %s", r.Version, r.Kubernetes, at)
		case !kubeInRange(r, at):
			why = fmt.Sprintf("%s needs Kubernetes %s; the cluster runs %s%s", r.Version, r.Kubernetes, at, by)
		}
		if why != "" {
			return &NoPathError{From: s.req.Current, To: s.req.Target, Rule: rule, Detail: why}
		}
		if r.InstallsKubernetes != nil {
			k, by = r.InstallsKubernetes, " after "+r.Version.String()+" installs it"
		}
	}
	// Not reached: a path legal but for the rule breaks it somewhere.
	return &NoPathError{From: s.req.Current, To: s.req.Target, Rule: rule, Detail: "every path breaks it"}
}
