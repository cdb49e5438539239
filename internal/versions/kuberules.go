package versions

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// kubeBefore is the Kubernetes the cluster runs when the hop to nodes[j]
// starts, whatever the path: known only when no release before it
// installs Kubernetes (then it is the cluster's).
func kubeBefore(nodes []node, j int, req Request) (*semver.Version, bool) {
	for _, n := range nodes[:max(j, 0)] {
		if n.InstallsKubernetes != nil {
			return nil, false
		}
	}
	return req.Kubernetes, true
}

// kubeAt is the Kubernetes the cluster runs at r when it ran before.
func kubeAt(r Release, before *semver.Version) *semver.Version {
	if r.InstallsKubernetes != nil {
		return r.InstallsKubernetes
	}
	return before
}

// kubeInRange tells whether r's Kubernetes range holds k (nil: unknown,
// not checked).
func kubeInRange(r Release, k *semver.Version) bool {
	return r.Kubernetes == nil || k == nil || r.Kubernetes.Check(k)
}

// kubeBlock says why r cannot be stopped at when the cluster runs before
// as the hop to it starts (the kubernetes-range and kubernetes-skip
// rules), or nil.
func kubeBlock(r Release, before *semver.Version, req Request) *NoPathError {
	fail := func(rule, detail string) *NoPathError {
		return &NoPathError{From: req.Current, To: req.Target, Rule: rule, Detail: detail}
	}
	if at := kubeAt(r, before); !kubeInRange(r, at) {
		if r.InstallsKubernetes != nil {
			return fail(RuleKubernetes, fmt.Sprintf("%s needs Kubernetes %s but installs %s", r.Version, r.Kubernetes, at))
		}
		return fail(RuleKubernetes, fmt.Sprintf("%s needs Kubernetes %s; the cluster runs %s", r.Version, r.Kubernetes, at))
	}
	if why := kubeSkip(r, before, req); why != "" {
		return fail(RuleKubeSkip, fmt.Sprintf("%s; the cluster runs %s: %s", installs(r), before, why))
	}
	return nil
}

// kubeSkip says why a hop to r may not move Kubernetes from before, or
// "": up one minor at most (a control plane upgrade skips no minor), and
// down only when a downgrade is asked for, one minor at most. Patches
// move freely. Nothing is checked when either version is unknown.
func kubeSkip(r Release, before *semver.Version, req Request) string {
	to := r.InstallsKubernetes
	if to == nil || before == nil {
		return ""
	}
	d := (int(to.Major())-int(before.Major()))*1000 + int(to.Minor()) - int(before.Minor())
	switch {
	case d > 1:
		return fmt.Sprintf("Kubernetes moves one minor per hop (upgrading a control plane skips no minor), so a release that installs %d.%d must be stopped at before it", before.Major(), before.Minor()+1)
	case d < 0 && !req.AllowDowngrade:
		return "that downgrades Kubernetes: ask for a downgrade explicitly"
	case d < -1:
		return "Kubernetes goes down one minor per hop at most"
	}
	return ""
}

func installs(r Release) string {
	return fmt.Sprintf("%s installs Kubernetes %s", r.Version, r.InstallsKubernetes)
}
