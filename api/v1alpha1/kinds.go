package v1alpha1

// Kind names what a step does by its field name in the plan ("crds",
// "helm", ...), "" when no kind is set (validation refuses that).
func (s Step) Kind() string {
	switch {
	case s.CRDs != nil:
		return "crds"
	case s.Manifests != nil:
		return "manifests"
	case s.Image != nil:
		return "image"
	case s.Helm != nil:
		return "helm"
	case s.Job != nil:
		return "job"
	case s.Recreate != nil:
		return "recreate"
	case s.Freeze != nil:
		return "freeze"
	case s.Approval != nil:
		return "approval"
	case s.Pause != nil:
		return "pause"
	case s.Autopilot != nil:
		return "autopilot"
	case s.Distribute != nil:
		return "distribute"
	case s.ClusterConfig != nil:
		return "clusterConfig"
	case s.Installation != nil:
		return "installation"
	case s.HelmUninstall != nil:
		return "helmUninstall"
	}
	return ""
}

// Kind names what a gate checks by its field name in the plan ("ready",
// "http", ...), "" when no kind is set.
func (g Gate) Kind() string {
	switch {
	case g.Ready != nil:
		return "ready"
	case g.HTTP != nil:
		return "http"
	case g.PodsRunning != nil:
		return "podsRunning"
	case g.PVCsBound != nil:
		return "pvcsBound"
	case g.NodesReady != nil:
		return "nodesReady"
	case g.HelmReleases != nil:
		return "helmReleases"
	case g.EnvKept != nil:
		return "envKept"
	case g.Soak != nil:
		return "soak"
	case g.Metric != nil:
		return "metric"
	}
	return ""
}
